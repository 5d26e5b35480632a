// Package faulttest runs the real binaries (cmd/api, cmd/worker, cmd/ctl, built by the test)
// as child processes against a private PostgreSQL and a private redis-server that the test
// starts, kills and restarts itself. Its tests are the startup test (migrate, readiness,
// registration, an analysis call, a clean SIGTERM shutdown), the start-order tests (api and
// worker together on an empty database, the worker first, both before PostgreSQL and Redis),
// the shutdown test (SIGTERM with MCP sessions and a waiting call open) and the fault
// proof: concurrent analysis calls through the real listener while PostgreSQL and Redis are
// down for 10 s, with no answer of 500, no credit lost and every job ended soon after
// recovery.
package faulttest
