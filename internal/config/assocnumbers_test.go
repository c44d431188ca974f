package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAssocNumbers(t *testing.T) {
	type n = AssocNumber
	tests := []struct {
		name     string
		file     string
		implicit []string
		want     map[AssocKey]AssocNumber
	}{
		{
			// scripts/record-assoc-mgr's cluster as real Slurm 22.05
			// numbered it (testdata/golden/assoc_mgr_all.txt): users added
			// bob, root, then alice, so they lie alice, root, bob.
			"real Slurm's recording", lines(`[[Account]]`, `Name = "lab"`,
				`[[User]]`, `Name = "bob"`, `Account = "lab"`,
				`[[User]]`, `Name = "root"`, `Account = "lab"`,
				`[[User]]`, `Name = "alice"`, `Account = "lab"`), nil,
			map[AssocKey]AssocNumber{
				{"root", ""}:     n{ID: 1, Lft: 1, Rgt: 12},
				{"root", "root"}: n{ID: 2, ParentID: 1, Lft: 10, Rgt: 11},
				{"lab", ""}:      n{ID: 3, ParentID: 1, Lft: 2, Rgt: 9},
				{"lab", "bob"}:   n{ID: 4, ParentID: 3, Lft: 7, Rgt: 8},
				{"lab", "root"}:  n{ID: 5, ParentID: 3, Lft: 5, Rgt: 6},
				{"lab", "alice"}: n{ID: 6, ParentID: 3, Lft: 3, Rgt: 4},
			},
		},
		{
			// Ids: the accounts, then [[User]] entries, then the users an
			// account lists; under each account the newest first, users
			// and sub-accounts alike.
			"sub-accounts and listed users", lines(`[[Account]]`, `Name = "lab"`, `Users = ["bob", "alice"]`,
				`[[Account]]`, `Name = "sub"`, `Parent = "lab"`,
				`[[User]]`, `Name = "carol"`, `Account = "sub"`), nil,
			map[AssocKey]AssocNumber{
				{"root", ""}:     n{ID: 1, Lft: 1, Rgt: 14},
				{"root", "root"}: n{ID: 2, ParentID: 1, Lft: 12, Rgt: 13},
				{"lab", ""}:      n{ID: 3, ParentID: 1, Lft: 2, Rgt: 11},
				{"sub", ""}:      n{ID: 4, ParentID: 3, Lft: 7, Rgt: 10},
				{"sub", "carol"}: n{ID: 5, ParentID: 4, Lft: 8, Rgt: 9},
				{"lab", "bob"}:   n{ID: 6, ParentID: 3, Lft: 5, Rgt: 6},
				{"lab", "alice"}: n{ID: 7, ParentID: 3, Lft: 3, Rgt: 4},
			},
		},
		{
			// No accounts: root and root/root are made with the cluster,
			// then the implicit account with its users in the order given.
			"the implicit account", "", []string{"alice", "root"},
			map[AssocKey]AssocNumber{
				{"root", ""}:     n{ID: 1, Lft: 1, Rgt: 10},
				{"root", "root"}: n{ID: 2, ParentID: 1, Lft: 8, Rgt: 9},
				{"lab", ""}:      n{ID: 3, ParentID: 1, Lft: 2, Rgt: 7},
				{"lab", "alice"}: n{ID: 4, ParentID: 3, Lft: 5, Rgt: 6},
				{"lab", "root"}:  n{ID: 5, ParentID: 3, Lft: 3, Rgt: 4},
			},
		},
		{
			// A user listed twice keeps its first id; an account named as
			// a user has no children through the user's association.
			"duplicates", lines(`[[Account]]`, `Name = "bob"`, `Users = ["bob"]`,
				`[[User]]`, `Name = "bob"`, `Account = "bob"`), nil,
			map[AssocKey]AssocNumber{
				{"root", ""}:     n{ID: 1, Lft: 1, Rgt: 8},
				{"root", "root"}: n{ID: 2, ParentID: 1, Lft: 6, Rgt: 7},
				{"bob", ""}:      n{ID: 3, ParentID: 1, Lft: 2, Rgt: 5},
				{"bob", "bob"}:   n{ID: 4, ParentID: 3, Lft: 3, Rgt: 4},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mustParse(t, tt.file).AssocNumbers(tt.implicit)); diff != "" {
				t.Errorf("AssocNumbers(%q) (-want +got):\n%s", tt.implicit, diff)
			}
		})
	}
}
