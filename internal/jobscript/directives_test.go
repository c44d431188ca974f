package jobscript

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mattn/go-shellwords"
	"pgregory.net/rapid"
)

// words splits one directive line's text (after "#SBATCH") as sbatch does.
func words(line string) ([]string, *Error) {
	var out []string
	for {
		w, n, ok, err := nextArgument(line, "job.sh", 7)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, w)
		line = line[n:]
	}
}

// TestGetArgument follows get_argument in src/sbatch/opt.c (Slurm 22.05).
func TestGetArgument(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"words are separated by spaces and tabs", " -p gpu\t--time=5 ", []string{"-p", "gpu", "--time=5"}},
		{"double quotes group words and disappear", `--job-name="my run"`, []string{"--job-name=my run"}},
		{"single quotes group words and disappear", `--comment='a b' x`, []string{"--comment=a b", "x"}},
		{"quotes may start mid-word", `--output=out/"a b".log`, []string{"--output=out/a b.log"}},
		{"a double quote inside single quotes is kept", `'say "hi"'`, []string{`say "hi"`}},
		{"an unquoted # ends the line even mid-word", `-J exp#3 -p gpu`, []string{"-J", "exp"}},
		{"a # at the start of a word ends the line", `-p gpu # -t 5`, []string{"-p", "gpu"}},
		{"a quoted # is kept", `--comment="#3" -p x`, []string{"--comment=#3", "-p", "x"}},
		{"an escaped # is kept", `--comment=a\#b`, []string{"--comment=a#b"}},
		{"a backslash escapes a quote outside quotes", `a\"b`, []string{`a"b`}},
		{"a backslash escapes a quote inside single quotes, unlike a shell", `'it\'s'`, []string{"it's"}},
		{"a backslash escapes a backslash", `a\\b`, []string{`a\b`}},
		{"an escaped space ends the word, unlike a shell", `a\ b`, []string{"a", "b"}},
		{"a trailing backslash is dropped", `ab\`, []string{"ab"}},
		{"a word of empty quotes ends the line", `-J "" -p gpu`, []string{"-J"}},
		{"empty quotes inside a word are nothing", `--comment=""x`, []string{"--comment=x"}},
		{"shell metacharacters are plain characters", `--comment=a;b|c&d>e$HOME`, []string{"--comment=a;b|c&d>e$HOME"}},
		{"hetjob as a word ends the line", `-n1 hetjob -n2`, []string{"-n1"}},
		{"HETJOB in any case ends the line", `-n1 HetJob`, []string{"-n1"}},
		{"hetjob inside a word is a word", `--comment=hetjob`, []string{"--comment=hetjob"}},
		{"hetjobs is a word", `hetjobs`, []string{"hetjobs"}},
		{"an empty line has no words", ``, nil},
		{"a carriage return is a space", "-p gpu\r", []string{"-p", "gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := words(tt.line)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("words of %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestGetArgumentFatal(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"an unmatched double quote", ` -J "abc`, "job.sh: line 7: Unmatched `\"` in [ \"abc]"},
		{"an unmatched single quote", `--comment='x`, "job.sh: line 7: Unmatched `'` in [--comment='x]"},
		{"a word starting with a colon", ` : -N2`, "job.sh: line 7: Unexpected `:` in [ : -N2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := words(tt.line)
			if err == nil {
				t.Fatalf("no error for %q", tt.line)
			}
			if err.Kind != KindFatal || err.Exit != 1 || err.Msg != tt.want {
				t.Errorf("got %v %d %q, want KindFatal 1 %q", err.Kind, err.Exit, err.Msg, tt.want)
			}
		})
	}
}

// TestGetArgumentAgreesWithShellwords checks that on lines without the
// characters where Slurm's rules and a shell's differ (backslash, '#', empty
// quotes, metacharacters), sbatch's splitting is go-shellwords' splitting.
func TestGetArgumentAgreesWithShellwords(t *testing.T) {
	word := rapid.StringMatching(`[A-Za-z0-9_=:,./%@+-]{1,8}`)
	quoted := rapid.Custom(func(t *rapid.T) string {
		q := rapid.SampledFrom([]string{`"`, `'`}).Draw(t, "quote")
		inner := rapid.StringMatching(`[A-Za-z0-9 =:,./%@+-]{1,8}`).Draw(t, "inner")
		return q + inner + q
	})
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		var parts []string
		for range n {
			w := word.Draw(t, "word")
			if rapid.Bool().Draw(t, "quote?") {
				w += quoted.Draw(t, "quoted")
			}
			// A word starting with ':' is fatal to Slurm, and "hetjob"
			// or "packjob" ends its line: not where the two agree.
			if strings.HasPrefix(w, ":") || isHetSeparator(w) {
				w = "x" + w
			}
			parts = append(parts, w)
		}
		line := strings.Join(parts, rapid.SampledFrom([]string{" ", "\t", "  "}).Draw(t, "sep"))
		got, err := words(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		want, serr := shellwords.Parse(line)
		if serr != nil {
			t.Fatalf("shellwords %q: %v", line, serr)
		}
		if len(want) == 0 {
			want = nil
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-shellwords +sbatch):\n%s", line, diff)
		}
	})
}

func TestScanHeader(t *testing.T) {
	tests := []struct {
		name   string
		script string
		sbatch []string
		slite  []string
		lines  []int
	}{
		{
			name:   "directives of several lines join into one list",
			script: "#!/bin/sh\n#SBATCH -p gpu\n#SBATCH -t 5 -J x\ntrue\n",
			sbatch: []string{"-p", "gpu", "-t", "5", "-J", "x"},
			lines:  []int{2, 2, 3, 3, 3, 3},
		},
		{
			name:   "the magic word may be glued to the option",
			script: "#!/bin/sh\n#SBATCH--time=5\n",
			sbatch: []string{"--time=5"},
			lines:  []int{2},
		},
		{
			name:   "a longer word starting with #SBATCH still starts a directive",
			script: "#!/bin/sh\n#SBATCHED -p gpu\n",
			sbatch: []string{"ED", "-p", "gpu"},
			lines:  []int{2, 2, 2},
		},
		{
			name:   "reading stops at the first command",
			script: "#!/bin/sh\n#SBATCH -p a\necho\n#SBATCH -p b\n",
			sbatch: []string{"-p", "a"},
			lines:  []int{2, 2},
		},
		{
			name:   "an indented comment does not stop reading",
			script: "#!/bin/sh\n   # note\n#SBATCH -p a\n",
			sbatch: []string{"-p", "a"},
			lines:  []int{3, 3},
		},
		{
			name:   "a line of spaces does not stop reading",
			script: "#!/bin/sh\n \t\v\f\r\n#SBATCH -p a\n",
			sbatch: []string{"-p", "a"},
			lines:  []int{3, 3},
		},
		{
			name:   "#SLITE lines are read apart",
			script: "#!/bin/sh\n#SLITE --yieldable\n#SBATCH -p a\n#SLITE --gpu-mem=1G\n",
			sbatch: []string{"-p", "a"},
			slite:  []string{"--yieldable", "--gpu-mem=1G"},
			lines:  []int{3, 3},
		},
		{
			name:   "a last line without a newline is read",
			script: "#!/bin/sh\n#SBATCH -p a",
			sbatch: []string{"-p", "a"},
			lines:  []int{2, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := scanHeader(tt.script, "job.sh")
			if err != nil {
				t.Fatal(err)
			}
			var got, gotSlite []string
			var lines []int
			for _, a := range h.sbatch {
				got = append(got, a.text)
				lines = append(lines, a.line)
			}
			for _, a := range h.slite {
				gotSlite = append(gotSlite, a.text)
			}
			if diff := cmp.Diff(tt.sbatch, got); diff != "" {
				t.Errorf("#SBATCH words (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.slite, gotSlite); diff != "" {
				t.Errorf("#SLITE words (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
