package analysis

import "testing"

func TestTitle(t *testing.T) {
	tests := []struct {
		keyword, intent, brand string
		year                   int
		want                   string
	}{
		// informational
		{"how to make cold brew at home", "", "", 2026, "How to Make Cold Brew at Home: A Step-by-Step Guide"},
		{"how do i clean a french press", "", "", 2026, "How to Clean a French Press: A Step-by-Step Guide"},
		{"what is cold brew", "", "", 2026, "What Is Cold Brew? Everything You Need to Know"},
		{"what's a macchiato", "", "", 2026, "What Is a Macchiato? Everything You Need to Know"},
		{"why is my espresso sour", "", "", 2026, "Why Is My Espresso Sour? The Reasons Explained"},
		{"can you freeze cold brew", "", "", 2026, "Can You Freeze Cold Brew? What You Need to Know"},
		{"how long to steep cold brew", "", "", 2026, "How Long to Steep Cold Brew: The Short Answer and What Changes It"},
		{"how long does cold brew last", "", "", 2026, "How Long Does Cold Brew Last? The Short Answer and What Changes It"},
		{"how much caffeine in a cup of coffee", "", "", 2026, "How Much Caffeine in a Cup of Coffee? The Short Answer and What Changes It"},
		{"where to buy cold brew", "informational", "", 2026, "Where to Buy Cold Brew: What You Need to Know"},
		{"seo tools for small business", "informational", "", 2026, "SEO Tools for Small Business: The Complete Guide"},
		{"cold brew tips", "", "", 2026, "Cold Brew Tips: Practical Advice That Works"},
		{"diy coffee table ideas", "", "", 2026, "DIY Coffee Table Ideas: Inspiration and Examples to Try"},
		{"iced coffee recipe", "", "", 2026, "Iced Coffee Recipe: Step-by-Step Instructions"},
		{"best way to make cold brew", "", "", 2026, "The Best Way to Make Cold Brew: A Step-by-Step Guide"},
		{"cold brew", "Informational", "Acme Coffee", 2026, "Cold Brew: The Complete Guide"},
		// commercial
		{"best cold brew maker", "", "", 2026, "Best Cold Brew Maker in 2026: Tested and Compared"},
		{"best cold brew maker", "", "", 0, "Best Cold Brew Maker: Tested and Compared"},
		{"best laptops 2024", "", "", 2026, "Best Laptops in 2026: Tested and Compared"},
		{"best cold brew maker", "", "Acme Coffee sells cold brew kits.", 2026, "Best Cold Brew Maker in 2026: Tested and Compared (from the Acme Coffee team)"},
		{"top 10 crm software", "", "", 2026, "Top 10 CRM Software in 2026: Tested and Compared"},
		{"iphone 15 vs samsung s24", "", "", 2026, "iPhone 15 vs Samsung S24: Which Should You Choose?"},
		{"cold brew versus iced coffee", "", "", 2026, "Cold Brew vs Iced Coffee: Which Should You Choose?"},
		{"breville barista express review", "", "", 2026, "Breville Barista Express Review (2026): Pros, Cons and Our Verdict"},
		{"notion alternatives", "", "", 2026, "Best Notion Alternatives in 2026: Compared Side by Side"},
		{"espresso machine comparison", "", "", 2026, "Espresso Machine Comparison: A Side-by-Side Breakdown"},
		{"cold brew coffee makers", "commercial", "", 2026, "Best Cold Brew Coffee Makers in 2026: Tested and Compared"},
		// transactional
		{"buy cold brew concentrate online", "", "", 2026, "Buy Cold Brew Concentrate: Prices, Options and Where to Get the Best Deal"},
		{"espresso machine for sale", "", "", 2026, "Espresso Machine for Sale: Prices, Options and Where to Get the Best Deal"},
		{"cold brew maker price", "", "", 2026, "Cold Brew Maker Prices: What You'll Pay and Where to Buy"},
		{"coffee shop near me", "", "", 2026, "Coffee Shop Near Me: How to Find the Best Local Options"},
		{"starbucks coupon", "", "", 2026, "Starbucks Deals: How to Get the Best Price"},
		{"where to buy cold brew", "", "", 2026, "Where to Buy Cold Brew: The Best Places Online and in Stores"},
		{"cheap flights to nyc", "", "", 2026, "Cheap Flights to NYC: How to Find the Lowest Prices"},
		// navigational
		{"gmail login", "", "", 2026, "Gmail Login: How to Sign In and Fix Common Problems"},
		{"acme sign up", "navigational", "", 2026, "Acme Sign Up: How to Create an Account"},
		{"amazon customer service", "", "", 2026, "Amazon Customer Service: How to Get Help Fast"},
		{"acme official site", "", "", 2026, "Acme: Official Website and Key Links"},
		{"  ", "", "", 2026, ""},
	}
	for _, tt := range tests {
		if got := Title(tt.keyword, tt.intent, tt.brand, tt.year); got != tt.want {
			t.Errorf("Title(%q, %q, %q, %d)\n got %q\nwant %q", tt.keyword, tt.intent, tt.brand, tt.year, got, tt.want)
		}
	}
}

func TestParseBrand(t *testing.T) {
	tests := []struct {
		in   string
		want Brand
	}{
		{"", Brand{}},
		{"Acme", Brand{Name: "Acme"}},
		{"acme coffee", Brand{Name: "acme coffee"}},
		{"Acme Coffee sells small-batch cold brew concentrate and brewing kits to home baristas. Founded 2015.",
			Brand{Name: "Acme Coffee", Offering: "small-batch cold brew concentrate and brewing kits"}},
		{"We are Acme Coffee, a small-batch roaster in Portland.", Brand{Name: "Acme Coffee", Offering: "a small-batch roaster"}},
		{"Our brand, Acme, makes ergonomic office chairs for remote workers.", Brand{Name: "Acme", Offering: "ergonomic office chairs"}},
		{"The Coffee Lab is a specialty coffee roaster based in Leeds", Brand{Name: "The Coffee Lab", Offering: "a specialty coffee roaster"}},
		{"Acme Inc. sells project management software for agencies.", Brand{Name: "Acme Inc", Offering: "project management software"}},
		{"iRobot builds home robots", Brand{Name: "iRobot", Offering: "home robots"}},
		{"small-batch coffee roaster in Portland", Brand{Offering: "small-batch coffee roaster in Portland"}},
	}
	for _, tt := range tests {
		if got := ParseBrand(tt.in); got != tt.want {
			t.Errorf("ParseBrand(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if got := (Brand{Name: "Acme", Offering: "chairs"}).Label(); got != "Acme (chairs)" {
		t.Errorf("Label = %q", got)
	}
}

func TestIsQuestion(t *testing.T) {
	for phrase, want := range map[string]bool{
		"how long does cold brew last": true, "is cold brew strong": true, "cold brew?": true,
		"cold brew ratio": false, "how": false, "best cold brew": false,
	} {
		if got := IsQuestion(phrase); got != want {
			t.Errorf("IsQuestion(%q) = %v, want %v", phrase, got, want)
		}
	}
}
