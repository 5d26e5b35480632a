// Package clienttest runs the Go client (module github.com/contentapi/contentapi/client)
// against the real service: the API as cmd/api wires it and an asynq worker, in the test
// process, over the test PostgreSQL and Redis. The client's own tests (client/, a module of
// its own) use a scripted fake server and import nothing of the service; the tests here need
// the service's internal packages, which another module may not import. It also checks that
// every error code the service answers with has a constant in the client.
package clienttest
