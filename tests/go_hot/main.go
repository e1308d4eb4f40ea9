// go_hot - ground truth for probe sampling a Go program from outside
// (tests/46-outside.t): hotA and hotB run the same loop, hotA three
// times as long, so a profile must show them at 75 % and 25 % of the
// samples, each under main.main, with main.step inlined in both.  Go links statically and keeps no CFI
// for its own code: probe reads its stacks with the frame sizes of
// .gopclntab (collector/symbols/gopclntab.c).
//
//	go_hot [ROUNDS]
package main

import (
	"fmt"
	"os"
	"strconv"
)

var sink uint64

// step is inlined into hotA and hotB (the compiler inlines a function this
// small): a stripped build names it from .gopclntab's inline tree.
func step(s uint64, i int) uint64 {
	return s*6364136223846793005 + uint64(i)
}

//go:noinline
func hotA(n int) {
	for i := 0; i < n; i++ {
		sink = step(sink, i)
	}
}

//go:noinline
func hotB(n int) {
	for i := 0; i < n; i++ {
		sink = step(sink, i)
	}
}

func main() {
	rounds := 100
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	for r := 0; r < rounds; r++ {
		hotA(3000000)
		hotB(1000000)
	}
	fmt.Println("checksum", sink != 0)
}
