// Package docgen writes the files `make install` installs beside the
// commands that are made from the code's own tables, so that they cannot
// drift from it: slurm-lite.toml(5) from examples/slurm-lite.toml (which
// internal/config's tests keep complete and true), and the bash
// completion from each command's --help (which each command's tests check
// against its option table). Its tests compare the committed files with
// what it writes now; `go test ./internal/docgen -update` rewrites them.
package docgen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ConfigPage is slurm-lite.toml(5), the man page of the configuration
// file, made from the commented example: its opening comment is the
// description, each commented key an entry, each table a subsection, and
// a table whose keys carry no comments (a second partition) an example.
func ConfigPage(example string) string {
	items := parseExample(example)
	var b strings.Builder
	b.WriteString(`.\" Made from examples/slurm-lite.toml by internal/docgen: edit the example,
.\" then run: go test ./internal/docgen -update
.TH SLURM-LITE.TOML 5 "" "slurm-lite" "File Formats"
.SH NAME
slurm-lite.toml \- the slurm-lite configuration file
.SH SYNOPSIS
.I /etc/slurm\-lite/slurm\-lite.toml
.SH DESCRIPTION
`)
	i := 0
	if len(items) > 0 && items[0].kind == itemText {
		writeText(&b, items[0].comment)
		i = 1
	}
	b.WriteString(".SH KEYS\n")
	for ; i < len(items); i++ {
		it := items[i]
		switch it.kind {
		case itemText:
			b.WriteString(".PP\n")
			writeText(&b, it.comment)
		case itemTable:
			// A table whose first key has no comment is shown whole, as an
			// example of the one described before it.
			if i+1 < len(items) && items[i+1].kind == itemKey && len(items[i+1].comment) == 0 {
				b.WriteString(".PP\n")
				writeText(&b, it.comment)
				b.WriteString(".PP\n.RS\n.nf\n" + escape(it.line) + "\n")
				for i+1 < len(items) && items[i+1].kind == itemKey && len(items[i+1].comment) == 0 {
					i++
					b.WriteString(escape(items[i].line) + "\n")
				}
				b.WriteString(".fi\n.RE\n")
				continue
			}
			fmt.Fprintf(&b, ".SS %s\n", quoteArg(it.line))
			writeText(&b, it.comment)
		case itemKey:
			name, value, _ := strings.Cut(it.line, "=")
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fR = %s\n", escape(strings.TrimSpace(name)), escape(strings.TrimSpace(value)))
			writeText(&b, it.comment)
		}
	}
	b.WriteString(`.SH FILES
.TP
.I /etc/slurm\-lite/slurm\-lite.toml
read by
.BR slurmd\-lite (8)
and the commands unless
.B \-f
or
.B $SLURM_LITE_CONF
names another.
.TP
.I examples/slurm\-lite.toml
in the source: every key, as above.
.SH SEE ALSO
.BR slurmd\-lite (8),
.BR slurm.conf (5)
`)
	return b.String()
}

type itemKind int

const (
	itemText  itemKind = iota // a comment paragraph of its own
	itemTable                 // [Table] or [[Table]], with the comment above
	itemKey                   // Key = value, with the comment above
)

type item struct {
	kind    itemKind
	line    string
	comment []string // without the leading "# "
}

// parseExample splits the example into comment paragraphs, table
// headers and keys, each header and key with the comment right above it.
func parseExample(src string) []item {
	var items []item
	var comment []string
	flush := func() {
		if len(comment) > 0 {
			items = append(items, item{kind: itemText, comment: comment})
			comment = nil
		}
	}
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "#"):
			c := strings.TrimPrefix(t, "#")
			comment = append(comment, strings.TrimPrefix(c, " "))
		case strings.HasPrefix(t, "["):
			items = append(items, item{kind: itemTable, line: t, comment: comment})
			comment = nil
		default:
			items = append(items, item{kind: itemKey, line: t, comment: comment})
			comment = nil
		}
	}
	flush()
	return items
}

// writeText writes comment lines as filled text; lines indented further
// (a list, a TOML fragment) stay as they are, and an empty comment line
// starts a new paragraph.
func writeText(b *strings.Builder, lines []string) {
	verbatim := false
	for _, l := range lines {
		indented := strings.HasPrefix(l, "  ")
		switch {
		case indented && !verbatim:
			b.WriteString(".RS\n.nf\n")
			verbatim = true
		case !indented && verbatim:
			b.WriteString(".fi\n.RE\n")
			verbatim = false
		}
		switch {
		case l == "" && !verbatim:
			b.WriteString(".sp\n")
		case verbatim:
			b.WriteString(escape(strings.TrimPrefix(l, "  ")) + "\n")
		default:
			b.WriteString(escape(l) + "\n")
		}
	}
	if verbatim {
		b.WriteString(".fi\n.RE\n")
	}
}

// escape makes a line plain text for troff: backslashes printed, and no
// line taken for a request because of its first character.
func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// quoteArg is a macro argument that may hold blanks.
func quoteArg(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"`
}

// Command is what the completion knows of one command: its --help, and
// the words it takes first (scontrol's commands), if any.
type Command struct {
	Name string
	Help string
	// Extra are options the command takes that Slurm's help leaves out
	// (squeue --me), as Options writes them.
	Extra []string
	Words []string
	// After lists the words completed after one word (scontrol show ...).
	After map[string][]string
}

// longOption matches a long option in a help text, and whether it takes
// a value ("--account=name": "=", "--exclusive[=user]": "[=").
var longOption = regexp.MustCompile(`(?:^|[\s,\[(|])(--[A-Za-z][A-Za-z0-9_-]*)(\[?=)?`)

// Options are the long options a help text names, sorted, each followed by
// "=" when it must have a value (named once with "=" anywhere in the help;
// an optional value, "--exclusive[=user]", has none).
func Options(help string) []string {
	valued := map[string]bool{}
	var out []string
	for _, m := range longOption.FindAllStringSubmatch(help, -1) {
		if m[2] == "=" {
			valued[m[1]] = true
		}
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	for i, opt := range out {
		if valued[opt] {
			out[i] = opt + "="
		}
	}
	slices.Sort(out)
	return out
}

// Completion is the bash completion script for cmds: each command's long
// options after "-", its first words (and the words after those that have
// some), and files otherwise (complete -o default).
func Completion(cmds []Command) string {
	var b strings.Builder
	b.WriteString(`# bash completion for slurm-lite's commands: their options, and scontrol's
# and slurmd-lite's commands. Made by internal/docgen from each command's
# --help; do not edit: go test ./internal/docgen -update rewrites it.
# Installed by make install as share/bash-completion/completions/slurm-lite,
# with a link per command so that bash-completion finds it by name.

_slurm_lite() {
	local cmd=${1##*/} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts= words= after= i
	case $cmd in
`)
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name)
		opts := Options(c.Help)
		for _, e := range c.Extra {
			if !slices.Contains(opts, e) {
				opts = append(opts, e)
			}
		}
		slices.Sort(opts)
		fmt.Fprintf(&b, "\t%s)\n\t\topts='%s'\n", c.Name, strings.Join(opts, " "))
		if len(c.Words) > 0 {
			fmt.Fprintf(&b, "\t\twords='%s'\n", strings.Join(c.Words, " "))
		}
		if len(c.After) > 0 {
			b.WriteString("\t\tcase $prev in\n")
			keys := make([]string, 0, len(c.After))
			for k := range c.After {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "\t\t%s) after='%s' ;;\n", k, strings.Join(c.After[k], " "))
			}
			b.WriteString("\t\tesac\n")
		}
		b.WriteString("\t\t;;\n")
	}
	b.WriteString(`	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		# An option that takes a value: no blank after its "=".
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return 0
	fi
	if [[ -n $after ]]; then
		COMPREPLY=($(compgen -W "$after" -- "$cur"))
		return 0
	fi
	if [[ -n $words ]]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == -* ]] || return 0
		done
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
	return 0
}
`)
	fmt.Fprintf(&b, "complete -o default -F _slurm_lite %s\n", strings.Join(names, " "))
	return b.String()
}

// ShippedConfig is the configuration `make install-config` (and a package)
// installs as /etc/slurm-lite/slurm-lite.toml: the example, with its
// opening comment replaced by shippedHeader and every key and table
// commented out, so that the file is safe on any machine as it is (the
// daemon runs on the built-in defaults: GPUs from NVML where the driver
// is, none simulated, no mail or webhook to a made-up server) and each
// key's meaning sits beside it, ready to be uncommented.
func ShippedConfig(example string) string {
	lines := strings.Split(example, "\n")
	// The example's opening comment, up to its first blank line, says what
	// the example is; the shipped file says what it is instead.
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++
	}
	var b strings.Builder
	b.WriteString(shippedHeader)
	for _, l := range lines[i:] {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			l = "#" + l
		}
		b.WriteString(l + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

const shippedHeader = `# /etc/slurm-lite/slurm-lite.toml: the configuration slurmd-lite and every
# command on this machine read when neither -f nor $SLURM_LITE_CONF names
# another.
#
# As shipped, every key is commented out and the daemon runs on built-in
# defaults: GPUs from NVML where the NVIDIA driver is (none otherwise, said
# in its log), one partition "gpu", every user with equal shares, state in
# /var/lib/slurm-lite, the socket at /run/slurm-lite/slurmd.sock, no mail
# program unless /usr/bin/mail exists, no webhooks, no web port.
#
# To change a setting, uncomment its line (and its table's [header]) and
# edit it; each key's comment says what it does, its default and its
# slurm.conf name, as slurm-lite.toml(5) does. Check the file with
# 'slurmd-lite config', then reload with 'systemctl reload slurmd-lite'
# (SIGHUP). The values shown are an example lab's, not the defaults.
`
