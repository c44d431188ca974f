package format

import "slices"

// AppendTasks appends the lines of squeue -r for the pending tasks of an
// array's record row r, one per task, in the order given: what
// AppendLine prints for a copy of r with Tasks "" and Task set to each.
// Every column but the task's own (%i, %K) reads the same for every task,
// so each is formatted once and copied: with 10,000 tasks this was most
// of squeue -r's time, a TIME and a reason formatted per line.
func (f Format) AppendTasks(b []byte, r *Row, tasks []int) []byte {
	if len(tasks) == 0 {
		return b
	}
	cs := columns[*Row, struct{}](f)
	t := *r
	t.Tasks, t.Task = "", tasks[0]
	// The line as literal runs between the per-task columns.
	type part struct {
		lit string
		c   *col[*Row, struct{}] // nil: lit alone
	}
	var parts []part
	var lit []byte
	for i := range cs {
		c := &cs[i]
		if f := c.f; f != nil {
			if f.task {
				parts = append(parts, part{lit: string(lit), c: c})
				lit = lit[:0]
			} else {
				lit = appendCell(lit, c.value(&t), c.width, c.right, !f.whole)
			}
		}
		lit = append(lit, c.suffix...)
	}
	lit = append(lit, '\n')
	parts = append(parts, part{lit: string(lit)})

	start := len(b)
	for k, task := range tasks {
		t.Task = task
		for _, p := range parts {
			b = append(b, p.lit...)
			switch c := p.c; {
			case c == nil:
			case c.f.appendValue != nil:
				at := len(b)
				b = fitCell(c.f.appendValue(&t, b), at, c.width, c.right, !c.f.whole)
			default:
				b = appendCell(b, c.value(&t), c.width, c.right, !c.f.whole)
			}
		}
		if k == 0 {
			// The rest are as long, give or take the digits of the
			// task's id: room for them at once, not by doubling.
			b = slices.Grow(b, (len(b)-start+4)*(len(tasks)-1))
		}
	}
	return b
}

// value is the column's field's value for r, sized to the column where
// the field asks.
func (c *col[R, X]) value(r R) string {
	if c.f.sized != nil {
		return c.f.sized(r, c.width)
	}
	return c.f.value(r)
}

// fitCell is appendCell for a value already appended to b at start (never
// Null): it pads, aligns or cuts it in place.
func fitCell(b []byte, start, width int, right, cut bool) []byte {
	n := len(b) - start
	switch {
	case width < 0:
		return append(b, ' ')
	case width == 0:
	case right && n < width:
		pad := width - n
		b = appendSpaces(b, pad)
		copy(b[start+pad:], b[start:start+n])
		for i := start; i < start+pad; i++ {
			b[i] = ' '
		}
	case right:
		if cut {
			b = b[:start+width]
		}
	case n > width:
		b = b[:start+width]
	default:
		b = appendSpaces(b, width-n)
	}
	return b
}
