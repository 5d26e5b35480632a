package worker_test

import (
	"testing"

	"github.com/contentapi/contentapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
