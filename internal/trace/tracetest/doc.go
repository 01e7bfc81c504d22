// Package tracetest holds test doubles for replay tests: ExactPool, the
// smallest pool that keeps the pool rules, so that trace replay and the
// replay command can be tested without depending on a real strategy.
package tracetest
