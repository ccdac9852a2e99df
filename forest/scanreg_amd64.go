//go:build amd64 && !purego

package forest

// scanRegRunAsm is scanRegRun in assembly; ents, lw, lwy and rec point at
// the slices' first elements, and the caller guarantees what scanRegRun's
// bounds checks would (every entry's row within lw and lwy, every weight
// up to tw within rec, ents holding last+1 entries).
//
//go:noescape
func scanRegRunAsm(ents *uint32, i, last int, lw, lwy *int64, rec *float64, ts, tw, wl, sl int64, best float64) (int, int64, int64, float64)

// scanRegFast is scanRegRun, in assembly on amd64.
func scanRegFast(ents []uint32, i, last int, lw, lwy []int64, rec []float64, ts, tw, wl, sl int64, bestScore float64) (int, int64, int64, float64) {
	if i >= last {
		return last, wl, sl, 0
	}
	return scanRegRunAsm(&ents[0], i, last, &lw[0], &lwy[0], &rec[0], ts, tw, wl, sl, bestScore)
}

// histPackedAsm is histPacked in assembly; the caller guarantees what
// histPacked's bounds checks would (every row within col and lv, every
// code's entries within h, every class within cm).
//
//go:noescape
func histPackedAsm(h *int64, col *uint8, rows *int32, n int, lv *int64, cm *int, cs int)

// histPackedFast is histPacked, in assembly on amd64.
func histPackedFast(h []int64, col []uint8, rows []int32, lv []int64, cm *[maxPacked]int, cs int) {
	if len(rows) > 0 {
		histPackedAsm(&h[0], &col[0], &rows[0], len(rows), &lv[0], &cm[0], cs)
	}
}
