package report

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
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
	} {
		if got := Count(c.n, c.one, c.many); got != c.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", c.n, c.one, c.many, got, c.want)
		}
	}
}
