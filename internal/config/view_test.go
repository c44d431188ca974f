package config

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// viewConf has what a View carries in its awkward forms: fractional and per-partition weights, a hidden partition with
// only a MaxTime, an account without users, two simulated GPU types.
const viewConf = `ClusterName = "lab.x"
TRESBillingWeights = "CPU=0.3333,Mem=0.25G,GRES/gpu=2.5"
AllowUnlistedUsers = true

[Node]
GPUs = "simulated"
[[Node.SimulatedGPU]]
Type = "a100"
Memory = "80G"
Count = 2
[[Node.SimulatedGPU]]
Type = "h100"
Memory = "80G"
Count = 1

[[Partition]]
PartitionName = "gpu"
Default = true
DefaultTime = "1:00:00"
TRESBillingWeights = "GRES/gpu=1.0"

[[Partition]]
PartitionName = "hid_den"
Hidden = true
MaxTime = "2-00:00:00"

[[Account]]
Name = "lab"
Users = ["alice", "bob"]

[[Account]]
Name = "empty"

[[User]]
Name = "carol"
Account = "lab"
`

// TestViewRoundTrips: what the settings file gives a listing command is
// what the configuration gives it (ViewOf), for the example configuration
// and for viewConf.
func TestViewRoundTrips(t *testing.T) {
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"example": string(example), "awkward": viewConf, "empty": ""} {
		t.Run(name, func(t *testing.T) {
			path := writeConf(t, body)
			got, err := readSettings(path)
			if err != nil {
				t.Fatalf("readSettings: %v", err)
			}
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want := ViewOf(c)
			if name == "awkward" && (len(want.Partitions) != 2 || len(want.SimulatedGPUTypes) != 2 || len(want.Accounts) != 2) {
				t.Fatalf("viewConf gave %+v: not the view it was written for", want)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("settings file's view (-ViewOf +file):\n%s", diff)
			}
		})
	}
}

// Words the configuration's checks would refuse still read back as
// written: the file's layout does not depend on them.
func TestViewQuotesItsWords(t *testing.T) {
	path := writeConf(t, "")
	id, _ := StatConfig(path)
	odd := "a \"b\" c\\ d\n\u00e9"
	want := &View{Settings: Settings{SocketPath: odd, MessageTimeout: 1, MaxScriptSize: 2, MaxArraySize: 3},
		ClusterName: odd, TRESBillingWeights: TRESWeights{"cpu": 1.0 / 3, "gres/gpu:a b": 1e-300},
		Partitions:        []PartitionView{{Name: odd, Hidden: true, DefaultLimit: -1}, {Name: ""}},
		SimulatedGPUTypes: []string{odd, ""},
		Accounts:          []AccountView{{Name: odd, Users: []string{"", odd}}, {Name: ""}},
		Users:             []string{odd, ""},
	}
	if err := WriteSettings(path, id, want); err != nil {
		t.Fatal(err)
	}
	got, err := readSettings(path)
	if err != nil {
		t.Fatalf("readSettings: %v", err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
}

// fileID writes what fmt wrote before it was written with strconv.
func TestFileIDIsTheFormatted(t *testing.T) {
	for _, st := range []syscall.Stat_t{
		{Dev: 2049, Ino: 12, Size: 340, Mtim: syscall.Timespec{Sec: 1700000000, Nsec: 5}, Ctim: syscall.Timespec{Sec: 1, Nsec: 999999999}},
		{Mtim: syscall.Timespec{Nsec: 120000000}},
	} {
		want := fmt.Sprintf("%d %d %d %d.%09d %d.%09d", st.Dev, st.Ino, st.Size,
			st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		if got := fileID(&st); got != want {
			t.Errorf("fileID = %q, want %q", got, want)
		}
	}
}

// A settings file over the size a command reads is not written, and one
// that says more than its End is not read.
func TestSettingsFileEnds(t *testing.T) {
	path := writeConf(t, viewConf)
	data, err := os.ReadFile(SettingsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SettingsPath(path), append(data, "User \"late\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := readSettings(path); err == nil {
		t.Fatalf("readSettings read past End: %+v", v)
	}
	big := &View{Users: make([]string, maxSettingsSize/4)}
	id, _ := StatConfig(path)
	if err := WriteSettings(filepath.Join(t.TempDir(), "c.toml"), id, big); err == nil {
		t.Fatal("WriteSettings wrote a file no command would read")
	}
}
