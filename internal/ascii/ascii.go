// Package ascii holds the byte case folds the search prefilter and the
// redaction trigger scan share (small enough to inline in their hot loops).
package ascii

// Lower folds an ASCII upper-case letter; other bytes are returned as is.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Upper folds an ASCII lower-case letter; other bytes are returned as is.
func Upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}
