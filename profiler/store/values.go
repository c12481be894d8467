package store

import (
	"database/sql"
	"math"
	"time"
)

// nullable returns nil (SQL NULL) for NaN, the unknown value, and f otherwise.
func nullable(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return f
}

// orNaN reads a nullable REAL: NULL becomes NaN.
func orNaN(n sql.NullFloat64) float64 {
	if !n.Valid {
		return math.NaN()
	}
	return n.Float64
}

// finiteOrNaN reports whether f is NaN (unknown) or finite.
func finiteOrNaN(f float64) bool { return !math.IsInf(f, 0) }

// positiveOrNaN reports whether f is NaN (unknown) or a finite positive number.
func positiveOrNaN(f float64) bool { return math.IsNaN(f) || (f > 0 && !math.IsInf(f, 0)) }

// positive reports whether f is a finite positive number.
func positive(f float64) bool { return f > 0 && !math.IsInf(f, 0) }

// ns converts a time to the stored form, unix nanoseconds.
func ns(t time.Time) int64 { return t.UnixNano() }

// fromNS converts the stored form back to a UTC time.
func fromNS(v int64) time.Time { return time.Unix(0, v).UTC() }

// nullNS converts a nullable stored time: NULL becomes the zero time.
func nullNS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromNS(v.Int64)
}

// boolInt converts a bool to the stored 0/1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
