package sched

// SetSearchMemo turns search's memos on or off, so tests can check that
// they change no answer. It returns the previous setting.
func SetSearchMemo(on bool) bool {
	was := searchMemo
	searchMemo = on
	return was
}
