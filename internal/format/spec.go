package format

// specToken is one "%[.][width]letter[suffix]" item of an -o format, as
// squeue's and sinfo's parse_format read it alike.
type specToken struct {
	right  bool
	width  int
	letter byte   // 0 when the token ends before a letter
	suffix string // what follows the letter up to the next '%'
	raw    string // the token without its '%', for an unknown letter
}

// splitShortSpec splits an -o format as squeue and sinfo do: the text
// before the first '%' (printed first), then one token per '%'. Runs of
// '%' separate tokens and empty tokens vanish, as with strtok.
func splitShortSpec(spec string) (prefix string, toks []specToken) {
	i := 0
	for i < len(spec) && spec[i] != '%' {
		i++
	}
	prefix, spec = spec[:i], spec[i:]
	start := 0
	for j := 0; j <= len(spec); j++ {
		if j < len(spec) && spec[j] != '%' {
			continue
		}
		if tok := spec[start:j]; tok != "" {
			toks = append(toks, parseSpecToken(tok))
		}
		start = j + 1
	}
	return prefix, toks
}

func parseSpecToken(tok string) specToken {
	t := specToken{raw: tok}
	i := 0
	if tok[0] == '.' {
		t.right = true
		i++
	}
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		t.width = t.width*10 + int(tok[i]-'0')
		i++
	}
	if i < len(tok) {
		t.letter = tok[i]
		i++
	}
	t.suffix = tok[i:]
	return t
}
