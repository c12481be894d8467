package gpulet

// MaxScale bounds LargestScale's doubling: a load that still fits at this
// many times itself is reported at it, a lower bound.
const MaxScale = 1 << 20

// LargestScale finds the largest factor s at which fits holds (a load
// scaled by s is placed in full): it doubles s from 1 while fits holds, then
// halves the bracket until it is within tol of its upper end (tol = 1e-3:
// 0.1%). It returns 0 when not even tol of the load fits, and the last
// factor that fitted when fits still holds at MaxScale. fits is taken to
// be monotone; its error ends the search.
func LargestScale(fits func(s float64) (bool, error), tol float64) (float64, error) {
	lo, hi := 0.0, 1.0
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*2
		if hi > MaxScale {
			return lo, nil
		}
	}
	for hi-lo > tol*hi {
		if lo == 0 && hi < tol {
			return 0, nil // not even tol of the load fits
		}
		mid := (lo + hi) / 2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
