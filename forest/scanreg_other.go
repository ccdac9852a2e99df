//go:build !amd64 || purego

package forest

// scanRegFast is scanRegRun where no assembly exists.
func scanRegFast(ents []uint32, i, last int, lw, lwy []int64, rec []float64, ts, tw, wl, sl int64, bestScore float64) (int, int64, int64, float64) {
	return scanRegRun(ents, i, last, lw, lwy, rec, ts, tw, wl, sl, bestScore)
}

// histPackedFast is histPacked where no assembly exists.
func histPackedFast(h []int64, col []uint8, rows []int32, lv []int64, cm *[maxPacked]int, cs int) {
	histPacked(h, col, rows, lv, cm, cs)
}
