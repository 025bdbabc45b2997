module github.com/day1ai/day1

go 1.24

require github.com/google/go-cmp v0.7.0
