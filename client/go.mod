module github.com/contentapi/contentapi/client

go 1.24
