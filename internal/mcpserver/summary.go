package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// summarize is the short text an assistant can quote about an answer: what the data holds
// (how many of each list, the plain values beside them) and what it cost. It reads the
// answer's shape, not its kind, so an analysis added to the catalogue is summarised too.
func summarize(tool string, status int, data, meta json.RawMessage) string {
	var d map[string]json.RawMessage
	_ = json.Unmarshal(data, &d)
	var m struct {
		CreditsUsed      *int   `json:"credits_used"`
		CreditsRemaining *int   `json:"credits_remaining"`
		JobID            string `json:"job_id"`
		DataSource       string `json:"data_source"`
	}
	_ = json.Unmarshal(meta, &m)
	if status == http.StatusAccepted {
		var p struct {
			JobID  string `json:"job_id"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(data, &p)
		return fmt.Sprintf("%s: job %s is still %s after the sync timeout; nothing is charged unless it succeeds. "+
			"Call get_job with job_id %q for its result.", tool, p.JobID, p.Status, p.JobID)
	}
	var parts []string
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var plain []string
	for _, k := range keys {
		v := d[k]
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil && len(v) > 0 && v[0] == '[' {
			parts = append(parts, fmt.Sprintf("%d %s", len(list), strings.ReplaceAll(k, "_", " ")))
			continue
		}
		var s any
		if json.Unmarshal(v, &s) == nil {
			switch x := s.(type) {
			case string:
				if len(x) <= 80 && x != "" {
					plain = append(plain, fmt.Sprintf("%s %s", k, x))
				}
			case float64, bool:
				plain = append(plain, fmt.Sprintf("%s %v", k, x))
			}
		}
	}
	var b strings.Builder
	b.WriteString(tool)
	if len(plain) > 6 {
		plain = plain[:6]
	}
	if all := append(plain, parts...); len(all) > 0 {
		b.WriteString(": " + strings.Join(all, ", "))
	}
	b.WriteString(".")
	if m.CreditsUsed != nil {
		fmt.Fprintf(&b, " %d credits used", *m.CreditsUsed)
		if m.CreditsRemaining != nil {
			fmt.Fprintf(&b, ", %d remaining", *m.CreditsRemaining)
		}
		b.WriteString(".")
	}
	if m.DataSource != "" {
		fmt.Fprintf(&b, " Data source: %s.", m.DataSource)
	}
	if m.JobID != "" {
		fmt.Fprintf(&b, " Job %s.", m.JobID)
	}
	return b.String()
}
