package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUserAccounts(t *testing.T) {
	golden := mustParse(t, goldenCluster)
	unlisted := mustParse(t, "AllowUnlistedUsers = true\n"+goldenCluster)
	twoAccounts := mustParse(t, lines(`[[Account]]`, `Name = "lab"`, `Users = ["alice"]`, `[[Account]]`, `Name = "phys"`,
		`[[User]]`, `Name = "alice"`, `Account = "phys"`, `DefaultAccount = "lab"`))
	type result struct {
		Accounts []string
		OK       bool
	}
	tests := []struct {
		name string
		c    *Config
		user string
		want result
	}{
		{"no accounts: everyone is in the implicit account", Default(), "carol", result{[]string{"lab"}, true}},
		{"a listed user", golden, "alice", result{[]string{"lab"}, true}},
		{"a user from Account.Users", golden, "bob", result{[]string{"lab"}, true}},
		{"root's first account is its default", golden, "root", result{[]string{"root", "lab"}, true}},
		{"an unlisted user may not run jobs", golden, "carol", result{nil, false}},
		{"an unlisted root has the root account", mustParse(t, lines(`[[Account]]`, `Name = "lab"`)), "root", result{[]string{"root"}, true}},
		{"AllowUnlistedUsers puts unlisted users in the implicit account", unlisted, "carol", result{[]string{"anchor"}, true}},
		{"the default account comes first", twoAccounts, "alice", result{[]string{"lab", "phys"}, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			got.Accounts, got.OK = tt.c.UserAccounts(tt.user)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("UserAccounts(%q) (-want +got):\n%s", tt.user, diff)
			}
		})
	}
}

func TestAccountTree(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []Account
	}{
		{"no accounts: the implicit one", "", []Account{{Name: "lab", Parent: RootAccount, Shares: 1}}},
		{"configured accounts only", lines(`[[Account]]`, `Name = "phys"`, `Shares = 2`),
			[]Account{{Name: "phys", Parent: RootAccount, Shares: 2}}},
		{"unlisted users add the implicit account", lines(`AllowUnlistedUsers = true`, `[[Account]]`, `Name = "phys"`),
			[]Account{{Name: "phys", Parent: RootAccount, Shares: 1}, {Name: "lab", Parent: RootAccount, Shares: 1}}},
		{"unless an account of that name exists", lines(`AllowUnlistedUsers = true`, `[[Account]]`, `Name = "lab"`, `Shares = 5`),
			[]Account{{Name: "lab", Parent: RootAccount, Shares: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mustParse(t, tt.file).AccountTree()); diff != "" {
				t.Errorf("AccountTree() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsOperatorAndAdminLevel(t *testing.T) {
	c := mustParse(t, lines(`Operators = ["ops"]`,
		`[[User]]`, `Name = "admin"`, `Account = "root"`, `AdminLevel = "Administrator"`,
		`[[User]]`, `Name = "op2"`, `Account = "root"`, `AdminLevel = "Operator"`,
		`[[User]]`, `Name = "alice"`, `Account = "root"`))
	got := map[string]bool{}
	for _, u := range []string{"root", "ops", "admin", "op2", "alice", "nobody"} {
		got[u] = c.IsOperator(u)
	}
	want := map[string]bool{"root": true, "ops": true, "admin": true, "op2": true, "alice": false, "nobody": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IsOperator (-want +got):\n%s", diff)
	}
	levels := map[string]string{}
	for _, u := range []string{"root", "ops", "admin", "op2", "alice", "nobody"} {
		levels[u] = c.AdminLevel(u)
	}
	wantLevels := map[string]string{"root": AdminAdministrator, "ops": AdminOperator, "admin": AdminAdministrator,
		"op2": AdminOperator, "alice": AdminNone, "nobody": AdminNone}
	if diff := cmp.Diff(wantLevels, levels); diff != "" {
		t.Errorf("AdminLevel (-want +got):\n%s", diff)
	}
}

func TestGPUType(t *testing.T) {
	n := Node{TypeAliases: map[string]string{"a100": "NVIDIA A100-SXM4-80GB", "h100": "nvidia_h100_80gb_hbm3"}}
	tests := []struct{ model, want string }{
		{"NVIDIA A100-SXM4-80GB", "a100"},
		{"nvidia a100-sxm4-80gb", "a100"},
		{"NVIDIA H100 80GB HBM3", "h100"},
		{"NVIDIA A100-PCIE-40GB", "nvidia_a100-pcie-40gb"},
		{"Tesla T4", "tesla_t4"},
	}
	for _, tt := range tests {
		if got := n.GPUType(tt.model); got != tt.want {
			t.Errorf("GPUType(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
}
