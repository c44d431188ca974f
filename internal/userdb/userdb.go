// Package userdb looks users and groups up in /etc/passwd and /etc/group:
// what the commands need to print names, without os/user.
//
// Why not os/user: built with cgo, os/user asks NSS, which links libc and
// the dynamic loader into every command and makes it start a millisecond
// later; a command is a process that lives for a few milliseconds. The
// commands are static binaries (README, docs/architecture.md), so they read
// the files, as os/user itself does without cgo. A name or number the files
// do not hold (a user from LDAP or SSSD) is asked of getent(1), which asks
// NSS: a process started only on that path, so a lab whose users are in
// /etc/passwd never pays for it.
package userdb

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// The files read; variables so that tests can point them elsewhere.
var (
	passwdFile = "/etc/passwd"
	groupFile  = "/etc/group"
)

// ErrNotFound is returned when the files name no such user or group.
var ErrNotFound = errors.New("no such user or group in /etc/passwd or /etc/group")

// User is a passwd(5) entry.
type User struct {
	Name string
	UID  uint32
	GID  uint32
	Home string
	// Shell is the login shell, "" when the entry names none (login(1)
	// then takes /bin/sh).
	Shell string
	// Gecos is the comment field: the full name, then ",room,phone,...".
	Gecos string
}

// Group is a group(5) entry.
type Group struct {
	Name    string
	GID     uint32
	Members []string
}

// ByID finds the user with uid.
func ByID(uid uint32) (User, error) {
	want := strconv.FormatUint(uint64(uid), 10)
	return findUser("passwd", want, func(f []string) bool { return f[2] == want })
}

// ByName finds the user called name.
func ByName(name string) (User, error) {
	return findUser("passwd", name, func(f []string) bool { return f[0] == name })
}

// Name is uid's user name, or "" when the files do not name it.
func Name(uid uint32) string {
	u, err := ByID(uid)
	if err != nil {
		return ""
	}
	return u.Name
}

// GroupByID finds the group with gid.
func GroupByID(gid uint32) (Group, error) {
	want := strconv.FormatUint(uint64(gid), 10)
	return findGroup(want, func(f []string) bool { return f[2] == want })
}

// GroupByName finds the group called name.
func GroupByName(name string) (Group, error) {
	return findGroup(name, func(f []string) bool { return f[0] == name })
}

// GroupName is gid's group name, or "" when the files do not name it.
func GroupName(gid uint32) string {
	g, err := GroupByID(gid)
	if err != nil {
		return ""
	}
	return g.Name
}

// CallerGroups are the groups of this process: its effective group and its
// supplementary groups, as the kernel holds them (so groups that came from
// LDAP at login count too).
func CallerGroups() []uint32 {
	ids := []uint32{uint32(os.Getegid())}
	more, _ := os.Getgroups()
	for _, g := range more {
		if uint32(g) != ids[0] {
			ids = append(ids, uint32(g))
		}
	}
	return ids
}

func findUser(db, key string, match func([]string) bool) (User, error) {
	var u User
	err := scanOrAsk(passwdFile, db, key, 7, func(f []string) bool {
		if !match(f) {
			return false
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			return false
		}
		u = User{Name: f[0], UID: uint32(uid), GID: uint32(gid), Gecos: f[4], Home: f[5], Shell: f[6]}
		return true
	})
	return u, err
}

func findGroup(key string, match func([]string) bool) (Group, error) {
	var g Group
	err := scanOrAsk(groupFile, "group", key, 4, func(f []string) bool {
		if !match(f) {
			return false
		}
		gid, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil {
			return false
		}
		g = Group{Name: f[0], GID: uint32(gid)}
		if f[3] != "" {
			g.Members = strings.Split(f[3], ",")
		}
		return true
	})
	return g, err
}

// getent is the program asked when the files miss; a variable for tests.
var getent = "getent"

// scanOrAsk is scan of file, then, when the file does not hold the entry,
// getent's answer for db and key read the same way.
func scanOrAsk(file, db, key string, n int, found func([]string) bool) error {
	err := scan(file, n, found)
	if !errors.Is(err, ErrNotFound) || key == "" {
		return err
	}
	out, ok := asked(db, key)
	if ok && scanLines(strings.NewReader(out), n, found) {
		return nil
	}
	return err
}

// answers are getent's answers so far, misses included: squeue --json
// names the owner of every job, and a process a job would be thousands.
var answers struct {
	sync.Mutex
	m map[string]*string // db + "\x00" + key; nil: getent knew none
}

// asked is getent's line for key in db, asked once per process.
func asked(db, key string) (string, bool) {
	k := db + "\x00" + key
	answers.Lock()
	defer answers.Unlock()
	if a, seen := answers.m[k]; seen {
		if a == nil {
			return "", false
		}
		return *a, true
	}
	if answers.m == nil {
		answers.m = map[string]*string{}
	}
	out, err := exec.Command(getent, db, key).Output()
	if err != nil { // not found there either (exit 2), or no getent
		answers.m[k] = nil
		return "", false
	}
	a := string(out)
	answers.m[k] = &a
	return a, true
}

// scan calls found with the fields of each well-formed line of file (n
// fields, colon-separated; comments and NIS "+" lines skipped) until it
// says the line is the one.
func scan(file string, n int, found func([]string) bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if scanLines(f, n, found) {
		return nil
	}
	return ErrNotFound
}

// scanLines is scan of an open file or of getent's answer.
func scanLines(r io.Reader, n int, found func([]string) bool) bool {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		fields := strings.Split(line, ":")
		if len(fields) < n {
			continue
		}
		if found(fields[:n]) {
			return true
		}
	}
	return false
}
