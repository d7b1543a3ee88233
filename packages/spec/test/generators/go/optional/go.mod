module github.com/antihax/optional

go 1.19
