package main

import (
	"context"
	"io"
	"os"
)

// The whole program: eight ListIssues calls, four at a time, against an API that allows a burst
// of five. Whatever the server throttled, every call comes back with its answer.
func Example() {
	run(context.Background(), os.Stdout, io.Discard)
	// Output:
	// acme/widgets: 2 open issues
	//   #1 Widgets stop spinning at 1,000 rpm
	//   #4 Document the widget API
	// acme/gadgets: 1 open issue
	//   #7 Gadget pairing fails over IPv6
	// acme/gizmos: 3 open issues
	//   #2 Gizmo firmware 2.0
	//   #3 Rename gizmo to doohickey?
	//   #9 Flaky gizmo test
	// acme/sprocket: no open issues
	// acme/cogs: 1 open issue
	//   #5 Cogs slip under load
	// acme/levers: 1 open issue
	//   #11 Lever arm too short
	// acme/pulleys: 1 open issue
	//   #6 Pulley ratio off by one
	// acme/missing: not found
	// 8 of 8 repositories answered
}
