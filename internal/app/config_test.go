package app

import (
	"testing"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
)

// The job path's production tuning is job.DefaultConfig's, apart from the deadline derived
// from JOB_TIMEOUT.
func TestJobConfigDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	jc := JobConfig(c)
	if d := job.DefaultConfig; jc.MaxAttempts != d.MaxAttempts || jc.StaleAfter != d.StaleAfter || jc.EnqueueGrace != d.EnqueueGrace {
		t.Fatalf("job config %+v, want job.DefaultConfig's %+v", jc, d)
	}
}
