package sacctmgr

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

func TestParseMgrWord(t *testing.T) {
	tests := []struct {
		arg  string
		want mgrWord
	}{
		{"withassoc", mgrWord{arg: "withassoc", n: 9, value: "withassoc"}},
		{"user=alice", mgrWord{arg: "user=alice", n: 4, hasEq: true, value: "alice"}},
		{"qos+=high", mgrWord{arg: "qos+=high", n: 3, hasEq: true, value: "high", option: '+'}},
		{"user=", mgrWord{arg: "user=", n: 4, hasEq: true}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseMgrWord(tt.arg), cmp.AllowUnexported(mgrWord{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMgrKeywords(t *testing.T) {
	tests := []struct {
		name     string
		word, kw string
		min      int
		want     bool
	}{
		{"a prefix as long as the minimum", "lis", "list", 3, true},
		{"a shorter prefix is not", "li", "list", 3, false},
		{"case does not matter", "ASSOC", "associations", 3, true},
		{"more than the keyword is not it", "lists", "list", 3, false},
		{"a whole keyword shorter than the minimum", "\\q", "\\q", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := is(tt.word, tt.kw, tt.min); got != tt.want {
				t.Errorf("is(%q, %q, %d) = %v, want %v", tt.word, tt.kw, tt.min, got, tt.want)
			}
		})
	}
	w := parseMgrWord("A=lab")
	if w.is("Accounts", 2) {
		t.Errorf(`"A=lab" matched Accounts: the "=" counts as a character, as in xstrncasecmp`)
	}
}

func TestSplitMgrLine(t *testing.T) {
	// As _get_command: quotes inside a word protect blanks, but a quote
	// that starts a word is not looked at, so the next one opens a quote
	// that runs to the end of the line.
	got := splitMgrLine(`  show assoc  format="account, user" where 'a b'  `)
	want := []string{"show", "assoc", `format="account, user"`, "where", "'a", "b'  "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMgrData(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte(`
ClusterName = "c"
[[QOS]]
Name = "high"
[[Account]]
Name  = "lab"
Users = ["bob", "alice"]
[[Account]]
Name   = "sub"
Parent = "lab"
[[User]]
Name = "carol"
Account = "sub"
Shares = 3
QOS = ["high"]
`))
	if err != nil {
		t.Fatal(err)
	}
	d := newMgrData(cfg, nil)
	type assoc struct {
		Account, User, Parent string
		ID, PID, LFT, RGT     int
	}
	var got []assoc
	for _, a := range d.assocs {
		got = append(got, assoc{a.Account, a.User, a.Parent, a.ID, a.ParentID, a.LFT, a.RGT})
	}
	// In lft order, with config.AssocNumbers' numbers (its tests hold the
	// rule): each account before what is under it, newest first.
	want := []assoc{
		{"root", "", "", 1, 0, 1, 14},
		{"lab", "", "root", 3, 1, 2, 11},
		{"lab", "alice", "", 7, 3, 3, 4},
		{"lab", "bob", "", 6, 3, 5, 6},
		{"sub", "", "lab", 4, 3, 7, 10},
		{"sub", "carol", "", 5, 4, 8, 9},
		{"root", "root", "", 2, 1, 12, 13},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
	var users []string
	for _, u := range d.users {
		users = append(users, u.Name+":"+u.DefaultAccount+":"+u.Admin)
	}
	wantUsers := []string{"alice:lab:None", "bob:lab:None", "carol:sub:None", "root:root:Administrator"}
	if diff := cmp.Diff(wantUsers, users); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"high"}, d.users[2].Assocs[0].QOS); diff != "" {
		t.Errorf("carol's QOS (-want +got):\n%s", diff)
	}
	var accts []string
	for _, a := range d.accounts {
		accts = append(accts, a.Name+":"+a.Description+":"+a.Organization)
	}
	wantAccts := []string{"lab:lab:lab", "root:default root account:root", "sub:sub:lab"}
	if diff := cmp.Diff(wantAccts, accts); diff != "" {
		t.Errorf("accounts (-want +got):\n%s", diff)
	}
	// show assoc: users first at each level, then by name.
	var order []string
	for _, a := range hierarchical(d.assocs) {
		order = append(order, a.Account+"/"+a.User)
	}
	wantOrder := []string{"root/", "root/root", "lab/", "lab/alice", "lab/bob", "sub/", "sub/carol"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("hierarchical order (-want +got):\n%s", diff)
	}
}
