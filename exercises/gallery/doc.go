// Package gallery keeps, as tests, the wrong fixes a student in a hurry
// makes for each exercise — fix one of three places, move the check outside
// the transaction, catch the unique violation and call it a duplicate, drop
// the payload comparison, change a boundary by one — and asserts that the
// exercise's own check rejects every one of them, for the reason expected.
// A check's strength is then a tested property, the way rapid's own tests
// assert that a checker catches a known-buggy implementation.
//
// It also holds the exercises that are near-copies of naive variants to
// their twins (TestNoDrift).
package gallery
