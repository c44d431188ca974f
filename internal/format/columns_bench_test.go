package format

import (
	"testing"
	"time"
)

// benchRows are 10,000 squeue rows, half running: the most squeue prints.
func benchRows() []Row {
	env := &Env{Now: testNow}
	rows := make([]Row, 10000)
	for i := range rows {
		j := job(uint32(i + 1))
		if i%2 == 0 {
			runningFor(time.Duration(i) * time.Second)(j)
		}
		rows[i] = FullRow(j, env)
	}
	return rows
}

// BenchmarkSqueueAppendLine is squeue's per-row path: every row of 10,000
// appended into one buffer, in the default format and in a wide -o one.
func BenchmarkSqueueAppendLine(b *testing.B) {
	rows := benchRows()
	for _, bc := range []struct{ name, spec string }{
		{"default", SqueueDefault},
		{"wide-o", "%.18i %.9P %.8j %.8u %.2t %.10M %.9l %.6D %.4C %10m %.20S %.20V %R"},
	} {
		f, _ := ParseLongFormat(bc.spec)
		if bc.spec[0] == '%' {
			f, _ = ParseFormat(bc.spec)
		}
		b.Run(bc.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				buf = buf[:0]
				for k := range rows {
					buf = f.AppendLine(buf, &rows[k])
				}
			}
		})
	}
}

// BenchmarkSqueueParse is parsing squeue's formats, once per run.
func BenchmarkSqueueParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ParseLongFormat(SqueueLong)
		ParseFormat(SqueueStart)
	}
}
