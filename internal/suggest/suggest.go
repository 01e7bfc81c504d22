package suggest

import (
	"slices"
	"strings"
)

// Nearest returns the candidate nearest to typed, or "" when none is near:
// at most a third of typed's letters changed, swapped, added or dropped, or
// typed is a prefix of the candidate. Ties go to the candidate first in
// sorted order, so the answer does not depend on the candidates' order.
func Nearest(typed string, candidates []string) string {
	sorted := slices.Clone(candidates)
	slices.Sort(sorted)
	best, bestD := "", len(typed)/3+1
	for _, c := range sorted {
		if d := Distance(typed, c); d < bestD || (best == "" && typed != "" && strings.HasPrefix(c, typed)) {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours each count
// one, so "stauts" is one step from "status".
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
