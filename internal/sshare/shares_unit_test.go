package sshare

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/format"
)

func TestShareLines(t *testing.T) {
	rows := []api.ShareRow{
		{Account: "root"},
		{Account: "root", User: "root", Depth: 1},
		{Account: "lab", Depth: 1},
		{Account: "lab", User: "alice", Depth: 2},
		{Account: "sub", Depth: 2},
		{Account: "sub", User: "bob", Depth: 3},
		{Account: "other", Depth: 1},
	}
	type line struct {
		Account, User, Parent string
		ID                    int
	}
	lines := func(ls []format.ShareLine) []line {
		var out []line
		for _, l := range ls {
			out = append(out, line{l.Account, l.User, l.Parent, l.ID})
		}
		return out
	}
	tests := []struct {
		name            string
		users, accounts []string
		want            []line
	}{
		{"every row, each account with its parent found from the depths", nil, nil, []line{
			{"root", "", "", 1}, {"root", "root", "", 2}, {"lab", "", "root", 3}, {"lab", "alice", "", 4},
			{"sub", "", "lab", 5}, {"sub", "bob", "", 6}, {"other", "", "root", 7}}},
		{"users named keep their rows and every account's", []string{"BOB"}, nil, []line{
			{"root", "", "", 1}, {"lab", "", "root", 3}, {"sub", "", "lab", 5}, {"sub", "bob", "", 6},
			{"other", "", "root", 7}}},
		{"accounts named keep their rows only", nil, []string{"sub"}, []line{
			{"sub", "", "lab", 5}, {"sub", "bob", "", 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lines(shareLines(rows, tt.users, tt.accounts))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
