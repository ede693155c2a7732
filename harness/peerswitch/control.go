package peerswitch

import (
	"encoding/json"
	"errors"
	"net/http"
)

// The control API a peer switch process serves (cmd/peerswitch), so the
// switch can run wherever the members' peer traffic can reach it — a
// process beside them, or a container on the docker runtime's network —
// and the harness drives it with Remote:
//
//	POST /members {"name","listen","target"} → {"listen"}   a proxy for a member
//	POST /cut     {"from","to"}                              drop from → to
//	POST /restore {"from","to"}                              let it pass again
//	GET  /cuts    → ["a→b", …]
//
// Errors are 400 with {"error"}; 404 names an unknown member.

type memberRequest struct {
	Name   string `json:"name"`
	Listen string `json:"listen"`
	Target string `json:"target"`
}

type pairRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ControlHandler serves the control API over s.
func (s *Switch) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /members", func(w http.ResponseWriter, r *http.Request) {
		var req memberRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || req.Listen == "" || req.Target == "" {
			answer(w, http.StatusBadRequest, map[string]string{"error": "want {name, listen, target}"})
			return
		}
		listen, err := s.Add(req.Name, req.Listen, req.Target)
		if err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		answer(w, http.StatusOK, map[string]string{"listen": listen})
	})
	pairOp := func(op func(from, to string) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req pairRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				answer(w, http.StatusBadRequest, map[string]string{"error": "want {from, to}"})
				return
			}
			if err := op(req.From, req.To); err != nil {
				code := http.StatusBadRequest
				if errors.Is(err, ErrUnknownMember) {
					code = http.StatusNotFound
				}
				answer(w, code, map[string]string{"error": err.Error()})
				return
			}
			answer(w, http.StatusOK, map[string]string{})
		}
	}
	mux.HandleFunc("POST /cut", pairOp(s.Cut))
	mux.HandleFunc("POST /restore", pairOp(s.Restore))
	mux.HandleFunc("GET /cuts", func(w http.ResponseWriter, r *http.Request) {
		cuts := s.Cuts()
		if cuts == nil {
			cuts = []string{}
		}
		answer(w, http.StatusOK, cuts)
	})
	return mux
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
