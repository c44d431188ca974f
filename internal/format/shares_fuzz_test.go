package format

import (
	"strings"
	"testing"
)

// The parsers of sshare's, sprio's and sacctmgr's formats take any text
// from the command line: none may panic, and what they keep must print.
func FuzzFormats(f *testing.F) {
	for _, s := range []string{"%.15i %9r", "x%i%z", "Account%256,User", "acc,,us,", `"a,b"c`, "%.", "%5", "gpu[1,2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
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
