package format

import (
	"strings"
	"testing"
)

// TestAppendTasks: squeue -r's lines for a pending array's tasks, formatted
// once and copied, are AppendLine's for each task, in every field (the
// "task" mark of the fields that change with the task is what this
// checks), every justification and width, full records and compact rows.
func TestAppendTasks(t *testing.T) {
	jobs := leanTestJobs()
	var rec int
	for i := range jobs {
		if jobs[i].ArrayRecord() {
			rec = i
		}
	}
	full := FullRow(&jobs[rec], squeueEnv)
	lean := NewRow(full.Job, squeueEnv)
	tasks := []int{2, 3, 4, 7, 10, 99999, 4000000}
	all, _ := ParseFormat("%all")
	specs := []Format{all}
	for _, s := range []string{"%i", "%.3i|%5K|%.40i|%i %K%F", "%10i%.1K text %j"} {
		f, _ := ParseFormat(s)
		specs = append(specs, f)
	}
	for _, s := range []string{SqueueDefault, SqueueLong, "jobarrayid:.3,arraytaskid:2 ,name", "jobarrayid:50,jobarrayid:.50,jobarrayid:0,jobarrayid"} {
		f, _ := ParseLongFormat(s)
		specs = append(specs, f)
	}
	for k, f := range specs {
		for _, r := range []Row{full, lean} {
			if r.Full == nil && !f.Lean() {
				continue
			}
			var want strings.Builder
			for _, task := range tasks {
				c := r
				c.Tasks, c.Task = "", task
				want.Write(f.AppendLine(nil, &c))
			}
			got := string(f.AppendTasks([]byte("before\n"), &r, tasks))
			if got != "before\n"+want.String() {
				t.Errorf("format %d, full=%v:\ngot:\n%s\nwant:\n%s", k, r.Full != nil, got, "before\n"+want.String())
			}
		}
	}
}
