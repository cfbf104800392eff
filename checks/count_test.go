package checks

import "testing"

// countCases are the same in lab/labtest, checks and cmd/lab, whose
// count functions must agree: the singular for 1 alone, and an irregular
// plural as given ("deliveries", not "deliverys").
var countCases = []struct {
	n         int
	one, many string
	want      string
}{
	{0, "guarantee", "guarantees", "0 guarantees"},
	{1, "guarantee", "guarantees", "1 guarantee"},
	{2, "interleaving", "interleavings", "2 interleavings"},
	{1, "delivery", "deliveries", "1 delivery"},
	{20, "delivery", "deliveries", "20 deliveries"},
	{-1, "error", "errors", "-1 errors"},
}

func TestCount(t *testing.T) {
	for _, c := range countCases {
		if got := count(c.n, c.one, c.many); got != c.want {
			t.Errorf("count(%d, %q, %q) = %q, want %q", c.n, c.one, c.many, got, c.want)
		}
	}
}
