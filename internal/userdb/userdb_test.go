package userdb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func withFiles(t *testing.T, passwd, group string) {
	t.Helper()
	dir := t.TempDir()
	p, g := filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	if err := os.WriteFile(p, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g, []byte(group), 0o644); err != nil {
		t.Fatal(err)
	}
	oldP, oldG := passwdFile, groupFile
	passwdFile, groupFile = p, g
	t.Cleanup(func() { passwdFile, groupFile = oldP, oldG })
}

func TestLookups(t *testing.T) {
	withFiles(t, "# a comment\n"+
		"root:x:0:0:root:/root:/bin/bash\n"+
		"broken:x:notanumber:0::/:/bin/sh\n"+
		"+nisentry::::::\n"+
		"alice:x:1001:1001:Alice,,,:/home/alice:/bin/bash\n",
		"root:x:0:\nlab:x:3000:alice,bob\nalice:x:1001:\n")

	u, err := ByID(1001)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(User{Name: "alice", UID: 1001, GID: 1001, Home: "/home/alice", Shell: "/bin/bash", Gecos: "Alice,,,"}, u); diff != "" {
		t.Errorf("ByID(1001) (-want +got):\n%s", diff)
	}
	if u, err := ByName("root"); err != nil || u.UID != 0 {
		t.Errorf("ByName(root) = %+v, %v", u, err)
	}
	if _, err := ByName("broken"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a line with a bad uid: %v, want ErrNotFound", err)
	}
	if got := Name(4242); got != "" {
		t.Errorf("Name(4242) = %q, want none", got)
	}
	g, err := GroupByName("lab")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Group{Name: "lab", GID: 3000, Members: []string{"alice", "bob"}}, g); diff != "" {
		t.Errorf("GroupByName(lab) (-want +got):\n%s", diff)
	}
	if got := GroupName(1001); got != "alice" {
		t.Errorf("GroupName(1001) = %q, want alice", got)
	}
}

func TestCallerGroupsStartWithTheEffectiveGroup(t *testing.T) {
	ids := CallerGroups()
	if len(ids) == 0 || ids[0] != uint32(os.Getegid()) {
		t.Errorf("CallerGroups() = %v, want the effective group %d first", ids, os.Getegid())
	}
}

// A user the files do not hold (LDAP, SSSD) is asked of getent, which asks
// NSS; one nobody knows is not found.
func TestUsersBeyondTheFilesComeFromGetent(t *testing.T) {
	withFiles(t, "root:x:0:0:root:/root:/bin/bash\n", "root:x:0:\n")
	dir := t.TempDir()
	fake, calls := filepath.Join(dir, "getent"), filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$1 $2" >> ` + calls + `
case "$1 $2" in
"passwd ldapuser"|"passwd 70001") echo "ldapuser:*:70001:70000:LDAP User:/home/ldapuser:/bin/bash" ;;
"group 70000") echo "ldapgroup:*:70000:ldapuser" ;;
*) exit 2 ;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := getent
	getent = fake
	answers.m = nil
	t.Cleanup(func() { getent, answers.m = old, nil })

	u, err := ByName("ldapuser")
	if err != nil || u != (User{Name: "ldapuser", UID: 70001, GID: 70000, Home: "/home/ldapuser", Shell: "/bin/bash", Gecos: "LDAP User"}) {
		t.Errorf("ByName(ldapuser) = %+v, %v", u, err)
	}
	if got := Name(70001); got != "ldapuser" {
		t.Errorf("Name(70001) = %q, want ldapuser", got)
	}
	if got := GroupName(70000); got != "ldapgroup" {
		t.Errorf("GroupName(70000) = %q, want ldapgroup", got)
	}
	if _, err := ByName("nobody-at-all"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ByName of an unknown user: %v, want ErrNotFound", err)
	}
	// The files come first: root is not asked of getent.
	if u, err := ByName("root"); err != nil || u.UID != 0 {
		t.Errorf("ByName(root) = %+v, %v", u, err)
	}
	// Each question is asked once, an unknown one too: squeue --json names
	// the owner of every job.
	for range 3 {
		Name(70001)
		ByName("nobody-at-all")
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := "passwd ldapuser\npasswd 70001\ngroup 70000\npasswd nobody-at-all\n"
	if string(b) != want {
		t.Errorf("getent was asked:\n%s\nwant each question once:\n%s", b, want)
	}
}
