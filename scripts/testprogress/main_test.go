package main

import (
	"strings"
	"testing"
)

// A stream as go test -json writes it for two packages, one passing and
// one with a failing test beside a passing one, and a package that does
// not build: each package's start and end on a line, the failing test's
// output whole, the passing test's dropped.
func TestRun(t *testing.T) {
	const stream = `{"Action":"start","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"}
{"Action":"run","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax","Test":"TestA"}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax","Test":"TestA","Elapsed":0.01}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax","Output":"PASS\n"}
{"Action":"pass","Package":"github.com/slurm-lite/slurm-lite/internal/slurmsyntax","Elapsed":0.25}
{"Action":"start","Package":"github.com/slurm-lite/slurm-lite/internal/e2e"}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestOK","Elapsed":1}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestBad","Output":"    x_test.go:9: got 2, want 3\n"}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestBad","Output":"--- FAIL: TestBad (0.50s)\n"}
{"Action":"fail","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Test":"TestBad","Elapsed":0.5}
{"Action":"fail","Package":"github.com/slurm-lite/slurm-lite/internal/e2e","Elapsed":181.04}
# github.com/slurm-lite/slurm-lite/internal/broken
internal/broken/b.go:3:1: syntax error
{"Action":"start","Package":"github.com/slurm-lite/slurm-lite/internal/broken"}
{"Action":"output","Package":"github.com/slurm-lite/slurm-lite/internal/broken","Output":"FAIL\tgithub.com/slurm-lite/slurm-lite/internal/broken [build failed]\n"}
{"Action":"fail","Package":"github.com/slurm-lite/slurm-lite/internal/broken","Elapsed":0}
`
	const want = `testing internal/slurmsyntax...
ok   internal/slurmsyntax 0.2s
testing internal/e2e...
=== RUN   TestBad
    x_test.go:9: got 2, want 3
--- FAIL: TestBad (0.50s)
FAIL internal/e2e 181.0s
# github.com/slurm-lite/slurm-lite/internal/broken
internal/broken/b.go:3:1: syntax error
testing internal/broken...
FAIL	github.com/slurm-lite/slurm-lite/internal/broken [build failed]
FAIL internal/broken 0.0s
`
	var out strings.Builder
	if code := run(strings.NewReader(stream), &out); code != 1 {
		t.Errorf("exit %d, want 1 (a package failed)", code)
	}
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	first := strings.Join(strings.Split(stream, "\n")[:6], "\n")
	if code := run(strings.NewReader(first), &out); code != 0 || out.String() != "testing internal/slurmsyntax...\nok   internal/slurmsyntax 0.2s\n" {
		t.Errorf("a passing package: exit %d, %q", code, out.String())
	}
}
