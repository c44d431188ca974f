package config

import (
	"sort"
	"strconv"
	"strings"
)

// BurntSushi/toml keeps key positions to itself, and keys inside arrays of
// tables share one name there ("Partition.MaxTime" for every partition), so
// this file finds the line of every key in the document itself. The
// document has already been parsed by toml, so the scan can assume it is
// well formed; it only has to be careful never to stop making progress.

// keyPath is a key's place in the document: table and key names, with "#N"
// for the Nth element (from 0) of an array or array of tables.
type keyPath []string

func (p keyPath) child(k string) keyPath {
	return append(p[:len(p):len(p)], k)
}

func (p keyPath) index(i int) keyPath {
	return p.child("#" + strconv.Itoa(i))
}

func (p keyPath) String() string { return strings.Join(p, "\x00") }

// lineIndex maps keyPath.String() to the 1-based line where the key (or
// the table's header) is written.
type lineIndex map[string]int

// line returns the line of p, or of its nearest ancestor written in the
// file; 0 if none is.
func (ix lineIndex) line(p keyPath) int {
	for n := len(p); n > 0; n-- {
		if l, ok := ix[p[:n].String()]; ok {
			return l
		}
	}
	return 0
}

type lineScanner struct {
	src      string
	pos      int
	newlines []int // offsets of '\n', for lineAt
	ix       lineIndex
	// arrays counts the elements of each array of tables so far, by the
	// keyPath.String() of the array.
	arrays map[string]int
}

func indexLines(src string) lineIndex {
	s := &lineScanner{src: src, ix: lineIndex{}, arrays: map[string]int{}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.newlines = append(s.newlines, i)
		}
	}
	var table keyPath
	for {
		s.skipBlank(true)
		if s.pos >= len(s.src) {
			return s.ix
		}
		start := s.pos
		if s.src[s.pos] == '[' {
			table = s.header()
		} else {
			s.keyValue(table)
		}
		if s.pos == start {
			s.pos++
		}
	}
}

func (s *lineScanner) lineAt(pos int) int {
	return 1 + sort.SearchInts(s.newlines, pos)
}

// record keeps the first line a path appears on: where it is defined.
func (s *lineScanner) record(p keyPath, pos int) {
	if _, ok := s.ix[p.String()]; !ok {
		s.ix[p.String()] = s.lineAt(pos)
	}
}

func (s *lineScanner) peek() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

// skipBlank skips spaces and tabs, and with newlines also line ends and
// comments.
func (s *lineScanner) skipBlank(newlines bool) {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t':
			s.pos++
		case newlines && (c == '\n' || c == '\r'):
			s.pos++
		case newlines && c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		default:
			return
		}
	}
}

// header reads "[a.b]" or "[[a.b]]" and returns the table's path, with the
// element index of every array of tables on the way.
func (s *lineScanner) header() keyPath {
	start := s.pos
	array := strings.HasPrefix(s.src[s.pos:], "[[")
	s.pos++
	if array {
		s.pos++
	}
	keys := s.key()
	s.skipBlank(false)
	for s.pos < len(s.src) && s.src[s.pos] == ']' {
		s.pos++
	}
	var p keyPath
	for i, k := range keys {
		p = p.child(k)
		if n, ok := s.arrays[p.String()]; ok && (i < len(keys)-1 || !array) {
			p = p.index(n - 1)
		}
	}
	if array {
		n := s.arrays[p.String()]
		s.arrays[p.String()] = n + 1
		s.record(p, start)
		p = p.index(n)
	}
	s.record(p, start)
	return p
}

// key reads a dotted key: bare, "basic" or 'literal' parts joined by dots.
func (s *lineScanner) key() []string {
	var keys []string
	for {
		s.skipBlank(false)
		keys = append(keys, s.simpleKey())
		s.skipBlank(false)
		if s.peek() != '.' {
			return keys
		}
		s.pos++
	}
}

func (s *lineScanner) simpleKey() string {
	start := s.pos
	switch s.peek() {
	case '"', '\'':
		s.str()
		raw := s.src[start:s.pos]
		if raw[0] == '\'' {
			return strings.Trim(raw, "'")
		}
		if k, err := strconv.Unquote(raw); err == nil {
			return k
		}
		return strings.Trim(raw, `"`)
	}
	for s.pos < len(s.src) && isBareKeyChar(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

func isBareKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func (s *lineScanner) keyValue(table keyPath) {
	start := s.pos
	p := table
	for _, k := range s.key() {
		p = p.child(k)
		s.record(p, start)
	}
	s.skipBlank(false)
	if s.peek() == '=' {
		s.pos++
	}
	s.skipBlank(false)
	s.value(p)
}

// value skips one value, recording the elements of arrays and the keys of
// inline tables under p.
func (s *lineScanner) value(p keyPath) {
	switch s.peek() {
	case '"', '\'':
		s.str()
	case '[':
		s.pos++
		for i := 0; ; {
			s.skipBlank(true)
			switch s.peek() {
			case 0:
				return
			case ']':
				s.pos++
				return
			case ',':
				s.pos++
				continue
			}
			el := p.index(i)
			s.record(el, s.pos)
			start := s.pos
			s.value(el)
			if s.pos == start {
				s.pos++
			}
			i++
		}
	case '{':
		s.pos++
		for {
			s.skipBlank(true)
			switch s.peek() {
			case 0:
				return
			case '}':
				s.pos++
				return
			case ',':
				s.pos++
				continue
			}
			start := s.pos
			s.keyValue(p)
			if s.pos == start {
				s.pos++
			}
		}
	default:
		for s.pos < len(s.src) && !strings.ContainsRune(" \t\r\n,]}#", rune(s.src[s.pos])) {
			s.pos++
		}
	}
}

// str skips a basic, literal or multi-line string.
func (s *lineScanner) str() {
	defer func() { s.pos = min(s.pos, len(s.src)) }()
	q := s.src[s.pos]
	if strings.HasPrefix(s.src[s.pos:], strings.Repeat(string(q), 3)) {
		delim := strings.Repeat(string(q), 3)
		s.pos += 3
		for s.pos < len(s.src) {
			if q == '"' && s.src[s.pos] == '\\' {
				s.pos += 2
				continue
			}
			if strings.HasPrefix(s.src[s.pos:], delim) {
				s.pos += 3
				// Up to two more quotes may end the content ("""a"""").
				for i := 0; i < 2 && s.peek() == q; i++ {
					s.pos++
				}
				return
			}
			s.pos++
		}
		return
	}
	s.pos++
	for s.pos < len(s.src) && s.src[s.pos] != q && s.src[s.pos] != '\n' {
		if q == '"' && s.src[s.pos] == '\\' {
			s.pos++
		}
		s.pos++
	}
	s.pos++
}
