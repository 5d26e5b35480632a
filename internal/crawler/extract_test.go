package crawler

import (
	"slices"
	"strings"
	"testing"
)

func TestCountWords(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want int
	}{
		{"empty", ``, 0},
		{"plain body", `<html><body><p>Hello world, this is text.</p></body></html>`, 5},
		{"no body tag", `<p>three little words</p>`, 3},
		{"title is not content", `<html><head><title>Many title words here</title></head><body>two words</body></html>`, 2},
		{"boilerplate left out", `<body>
			<header>Site Name Tagline</header>
			<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
			<p>Only these five words count.</p>
			<aside>Related posts list</aside>
			<script>var a = "not words";</script>
			<style>p { color: red }</style>
			<noscript>Enable JavaScript please</noscript>
			<template><p>hidden template text</p></template>
			<svg><text>vector label</text><title>svg title</title></svg>
			<form><label>Your email</label><button>Subscribe now</button></form>
			<iframe>fallback frame text</iframe>
			<footer>Copyright 2024 Example Inc</footer>
		</body>`, 5},
		{"main wins over body", `<body><p>outside words here</p><main><p>inside main</p></main><p>more outside</p></body>`, 2},
		{"main excludes nested nav", `<main><nav>skip me</nav><p>one two three</p></main>`, 3},
		{"articles when no main", `<body><div>intro text</div><article>first article</article><article>second one here</article></body>`, 5},
		{"main beats article", `<article>article words</article><main>main</main>`, 1},
		{"apostrophes and hyphens join", `<p>Don't stop: state-of-the-art e-mail isn’t hard</p>`, 6},
		{"trailing and double joiners split", `<p>well- known 'quoted' a--b</p>`, 5},
		{"numbers are words", `<p>3 apples cost 4.50 dollars</p>`, 6},
		{"entities separate", `<p>one&nbsp;two&amp;three</p>`, 3},
		{"inline tags do not split", `<p>Hel<b>lo</b> wor<span>ld</span></p>`, 2},
		{"block tags split", `<div>one</div><div>two</div><p>three</p>four<br>five`, 5},
		{"unicode letters and marks", `<p>naïve café Привет мир cafe` + "\u0301" + `</p>`, 5},
		{"punctuation only", `<p>— ... !!! ???</p>`, 0},
		{"stray end tags harmless", `</nav></main><p>still counted here</p>`, 3},
		{"unclosed boilerplate swallows rest", `<p>a b</p><aside>c d`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountWords([]byte(tt.doc)); got != tt.want {
				t.Errorf("CountWords = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestExtractPage(t *testing.T) {
	doc := `<!doctype html><html><head>
		<title>  The   Title
		</title>
		<meta name="Description" content=" A  short description. ">
		<meta name="robots" content="index, NOFOLLOW">
		<link rel="alternate stylesheet" href="/style.css">
		<link rel="Canonical" href="/canon#x">
		<base href="/base/">
		</head><body>
		<svg><title>icon title</title></svg>
		<header><h1>First <em>heading</em></h1></header>
		<h1>Second heading</h1>
		<h2> Alpha </h2><p>text</p><h2>Beta <script>ignored()</script>gamma</h2>
		<h2></h2>
		<a href="page-a">A</a> <a href="https://other.example/">B</a>
		</body></html>`
	info := extractPage([]byte(doc), true)
	if info.title != "The Title" {
		t.Errorf("title = %q", info.title)
	}
	if info.description != "A short description." {
		t.Errorf("description = %q", info.description)
	}
	if info.h1 != "First heading" || info.h1s != 2 {
		t.Errorf("h1 = %q of %d, want the first of 2", info.h1, info.h1s)
	}
	if want := []string{"Alpha", "Beta gamma"}; !slices.Equal(info.h2s, want) {
		t.Errorf("h2s = %q, want %q", info.h2s, want)
	}
	if info.canonical != "/canon#x" || info.base != "/base/" {
		t.Errorf("canonical = %q, base = %q", info.canonical, info.base)
	}
	if info.noindex || !info.nofollow {
		t.Errorf("noindex = %v, nofollow = %v", info.noindex, info.nofollow)
	}
	want := []link{{href: "/style.css", kind: linkStyle}, {href: "/canon#x", kind: linkCanonical},
		{href: "page-a", kind: linkAnchor}, {href: "https://other.example/", kind: linkAnchor}}
	if !slices.Equal(info.links, want) {
		t.Errorf("links = %v, want %v", info.links, want)
	}
}

func TestExtractPageBoundsHostileInput(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	doc := "<title>" + long + "</title>" + strings.Repeat("<h2>x</h2>", 500) + "<h1>" + long + "</h1>"
	info := extractPage([]byte(doc), false)
	if len(info.title) > maxTextLen || len(info.h1) > maxTextLen {
		t.Errorf("title %d bytes, h1 %d bytes; want <= %d", len(info.title), len(info.h1), maxTextLen)
	}
	if len(info.h2s) != maxH2s {
		t.Errorf("%d h2s kept, want %d", len(info.h2s), maxH2s)
	}
	if info.links != nil {
		t.Errorf("links collected without being asked for")
	}
}

func TestRobotsDirectives(t *testing.T) {
	tests := []struct {
		value             string
		noindex, nofollow bool
	}{
		{"noindex", true, false},
		{"NoIndex, NoFollow", true, true},
		{"none", true, true},
		{"index, follow", false, false},
		{"googlebot: noindex", true, false},
		{"otherbot: noindex, nofollow", false, false},
		{"unavailable_after: 25 Jun 2010 15:00:00 PST", false, false},
		{"max-snippet: 20, noindex", true, false},
		{"", false, false},
	}
	for _, tt := range tests {
		noindex, nofollow := robotsDirectives(tt.value)
		if noindex != tt.noindex || nofollow != tt.nofollow {
			t.Errorf("robotsDirectives(%q) = %v, %v; want %v, %v", tt.value, noindex, nofollow, tt.noindex, tt.nofollow)
		}
	}
}

// TestExtractPageH1s: h1 elements without text (an image logo) neither count nor name the
// page's h1, so such a page is missing an h1.
func TestExtractPageH1s(t *testing.T) {
	for _, c := range []struct {
		doc string
		h1  string
		h1s int
	}{
		{`<p>no heading</p>`, "", 0},
		{`<h1><img src="logo.png" alt=""></h1><h1> </h1>`, "", 0},
		{`<h1><img src="logo.png"></h1><main><h1>Real title</h1></main>`, "Real title", 1},
		{`<h1>One</h1><h1>Two</h1><h1>Three</h1>`, "One", 3},
		{`<script>document.write("<h1>x</h1>")</script><h1>Only</h1>`, "Only", 1},
	} {
		info := extractPage([]byte(c.doc), false)
		if info.h1 != c.h1 || info.h1s != c.h1s {
			t.Errorf("%s: h1 %q of %d, want %q of %d", c.doc, info.h1, info.h1s, c.h1, c.h1s)
		}
	}
}
