package nvmlstub

import "testing"

func TestBuild(t *testing.T) {
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	for _, api := range []int{Current, OldDriver} {
		if _, err := Build(t.TempDir(), api); err != nil {
			t.Fatal(err)
		}
	}
}
