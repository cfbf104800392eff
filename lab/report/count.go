package report

import "fmt"

// Count writes n with the noun in the number it takes: "1 error",
// "2 errors", "0 deliveries". The plural is given, not made: "deliveries",
// not "deliverys".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
