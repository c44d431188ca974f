package format

import (
	"regexp"
	"strings"
	"testing"
)

// hugeWidth finds a width of six digits or more in a format.
var hugeWidth = regexp.MustCompile(`[0-9]{6}`)

// The parsers of sshare's, sprio's and sacctmgr's formats take any text
// from the command line: none may panic, and what they keep must print.
func FuzzFormats(f *testing.F) {
	for _, s := range []string{"%.15i %9r", "x%i%z", "Account%256,User", "acc,,us,", `"a,b"c`, "%.", "%5", "gpu[1,2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		// A width of billions is a valid format that prints gigabytes of
		// spaces, as Slurm's would: not what the fuzzer is here to find,
		// and its workers run out of memory on it.
		if hugeWidth.MatchString(spec) {
			t.Skip("a width of over 99,999")
		}
		for _, n := range AddToCharList(nil, spec) {
			if strings.ToLower(n) != n {
				t.Fatalf("AddToCharList(%q) kept %q, not lower-cased", spec, n)
			}
		}
		if fields, _ := ParseShareFields(spec); fields != nil {
			FieldsHeader(fields, Fixed)
			Sshare([]ShareLine{{}}, ShareOptions{Fields: fields, TRES: ShareTRES})
		}
		pf, _ := ParsePrioFormat(spec)
		pf.Header(PrioWeights{})
		pf.Line(&PrioRow{}, PrioWeights{})
		if cols, bad := MgrColumns(AddToCharList(nil, spec), false); bad == "" {
			ListAssocs(cols, []MgrAssoc{{Account: "a"}}, true, MgrOutput{})
		}
	})
}
