package localapi

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// BenchmarkRoundTrip is one request and its answer over a kept-alive
// connection, identity and strict decoding included: what every command
// pays on top of the daemon's own work.
func BenchmarkRoundTrip(b *testing.B) {
	s := startServerAt(b, filepath.Join(b.TempDir(), "slurmd.sock"), withUsers(fakeUsers{
		names:  map[uint32]string{0: "root"},
		groups: map[string][]uint32{"root": {}},
	}), withAccess(Access{Shared: true}))
	c := s.client(b)
	in := echoIn{Name: "train", N: 4}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var out echoOut
		if err := c.Do(ctx, "POST", "/v1/echo", in, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewConnection is a command's first request: connect, the
// kernel's credentials, the user database (the real one), one answer.
func BenchmarkNewConnection(b *testing.B) {
	s := startServerAt(b, filepath.Join(b.TempDir(), "slurmd.sock"), withUsers(SystemUsers{}), withAccess(Access{Shared: true}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c := sockclient.New(s.sock)
		var id Identity
		if err := c.Do(ctx, "GET", "/v1/whoami", nil, &id); err != nil {
			b.Fatal(err)
		}
	}
}
