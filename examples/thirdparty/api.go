package main

import (
	"encoding/json"
	"net/http"
)

// issues is the fake API's data: the open issues of each repository it knows.
var issues = map[string][]Issue{
	"acme/widgets":  {{1, "Widgets stop spinning at 1,000 rpm", "open"}, {4, "Document the widget API", "open"}},
	"acme/gadgets":  {{7, "Gadget pairing fails over IPv6", "open"}},
	"acme/gizmos":   {{2, "Gizmo firmware 2.0", "open"}, {3, "Rename gizmo to doohickey?", "open"}, {9, "Flaky gizmo test", "open"}},
	"acme/sprocket": {},
	"acme/cogs":     {{5, "Cogs slip under load", "open"}},
	"acme/levers":   {{11, "Lever arm too short", "open"}},
	"acme/pulleys":  {{6, "Pulley ratio off by one", "open"}},
}

// apiHandler serves GET /repos/{owner}/{repo}/issues from issues, in the manner of GitHub's REST
// API: JSON, and 404 with a message for an unknown repository. Rate limiting is not its business:
// the testserver in front of it does that.
func apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues", func(w http.ResponseWriter, r *http.Request) {
		list, ok := issues[r.PathValue("owner")+"/"+r.PathValue("repo")]
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": "Not Found"})
			return
		}
		_ = json.NewEncoder(w).Encode(list)
	})
	return mux
}
