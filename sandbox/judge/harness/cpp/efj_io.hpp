namespace efj {
[[noreturn]] inline void bad_input(const std::string& why) {
    std::cerr << "edit-fidelity judge: bad test input: " << why << std::endl;
    std::exit(3);
}
struct In {
    std::string s; size_t i = 0;
    explicit In(std::string text) : s(std::move(text)) {}
    void ws() { while (i < s.size() && std::isspace((unsigned char)s[i])) ++i; }
    bool eat(char c) { ws(); if (i < s.size() && s[i] == c) { ++i; return true; } return false; }
    void need(char c) { if (!eat(c)) bad_input(std::string("expected '") + c + "' in " + s.substr(0, 200)); }
    bool null() { ws(); if (s.compare(i, 4, "null") == 0) { i += 4; return true; } return false; }
    std::string atom() {
        ws(); size_t j = i;
        while (i < s.size() && (std::isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')) ++i;
        if (j == i) bad_input("expected a value in " + s.substr(0, 200));
        return s.substr(j, i - j);
    }
    std::string str() {
        ws();
        if (!eat('"')) return atom();
        std::string out;
        while (i < s.size() && s[i] != '"') {
            char c = s[i++];
            if (c != '\\' || i >= s.size()) { out += c; continue; }
            char e = s[i++];
            switch (e) {
                case 'n': out += '\n'; break; case 't': out += '\t'; break; case 'r': out += '\r'; break;
                case 'b': out += '\b'; break; case 'f': out += '\f'; break;
                case 'u': {
                    unsigned cp = std::stoul(s.substr(i, 4), nullptr, 16); i += 4;
                    if (cp < 0x80) out += char(cp);
                    else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
                    else { out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
                    break;
                }
                default: out += e;
            }
        }
        need('"');
        return out;
    }
};
inline void rd(In& in, int& x) { x = (int)std::stoll(in.atom()); }
inline void rd(In& in, long& x) { x = std::stol(in.atom()); }
inline void rd(In& in, long long& x) { x = std::stoll(in.atom()); }
inline void rd(In& in, unsigned& x) { x = (unsigned)std::stoull(in.atom()); }
inline void rd(In& in, unsigned long& x) { x = std::stoul(in.atom()); }
inline void rd(In& in, unsigned long long& x) { x = std::stoull(in.atom()); }
inline void rd(In& in, short& x) { x = (short)std::stoi(in.atom()); }
inline void rd(In& in, double& x) { x = std::stod(in.atom()); }
inline void rd(In& in, float& x) { x = std::stof(in.atom()); }
inline void rd(In& in, bool& x) { std::string a = in.atom(); x = a == "true" || a == "1"; }
inline void rd(In& in, char& x) { std::string a = in.str(); x = a.empty() ? '\0' : a[0]; }
inline void rd(In& in, std::string& x) { x = in.str(); }
inline void rd(In& in, ListNode*& head) {
    in.need('['); ListNode dummy; ListNode* tail = &dummy;
    if (!in.eat(']')) { do { int v; rd(in, v); tail->next = new ListNode(v); tail = tail->next; } while (in.eat(',')); in.need(']'); }
    head = dummy.next;
}
inline void rd(In& in, TreeNode*& root) {
    in.need('['); std::vector<TreeNode*> nodes;
    if (!in.eat(']')) {
        do { if (in.null()) nodes.push_back(nullptr); else { int v; rd(in, v); nodes.push_back(new TreeNode(v)); } } while (in.eat(','));
        in.need(']');
    }
    root = nodes.empty() ? nullptr : nodes[0];
    size_t child = 1;
    for (size_t k = 0; k < nodes.size() && child < nodes.size(); ++k) {
        if (!nodes[k]) continue;
        nodes[k]->left = nodes[child++];
        if (child < nodes.size()) nodes[k]->right = nodes[child++];
    }
}
template <class T> void rd(In& in, std::vector<T>& v) {
    v.clear(); in.need('[');
    if (in.eat(']')) return;
    do { T x{}; rd(in, x); v.push_back(x); } while (in.eat(','));
    in.need(']');
}

inline void wr(std::ostream& o, int x) { o << x; }
inline void wr(std::ostream& o, long x) { o << x; }
inline void wr(std::ostream& o, long long x) { o << x; }
inline void wr(std::ostream& o, unsigned x) { o << x; }
inline void wr(std::ostream& o, unsigned long x) { o << x; }
inline void wr(std::ostream& o, unsigned long long x) { o << x; }
inline void wr(std::ostream& o, short x) { o << x; }
inline void wr(std::ostream& o, double x) { char b[64]; std::snprintf(b, sizeof b, "%.12g", x); o << b; }
inline void wr(std::ostream& o, float x) { wr(o, (double)x); }
inline void wr(std::ostream& o, bool x) { o << (x ? "true" : "false"); }
inline void wr(std::ostream& o, const std::string& s) {
    o << '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') o << '\\' << c;
        else if (c == '\n') o << "\\n";
        else if (c == '\t') o << "\\t";
        else if (c == '\r') o << "\\r";
        else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o << b; }
        else o << c;
    }
    o << '"';
}
inline void wr(std::ostream& o, const char* s) { wr(o, std::string(s)); }
inline void wr(std::ostream& o, char c) { wr(o, std::string(1, c)); }
inline void wr(std::ostream& o, ListNode* h) {
    o << '['; int n = 0;
    for (; h && n < 1000000; h = h->next, ++n) { if (n) o << ','; o << h->val; }
    o << ']';
}
inline void wr(std::ostream& o, TreeNode* root) {
    std::vector<TreeNode*> order; if (root) order.push_back(root);
    for (size_t k = 0; k < order.size() && order.size() < 2000000; ++k)
        if (order[k]) { order.push_back(order[k]->left); order.push_back(order[k]->right); }
    while (!order.empty() && !order.back()) order.pop_back();
    o << '[';
    for (size_t k = 0; k < order.size(); ++k) { if (k) o << ','; if (order[k]) o << order[k]->val; else o << "null"; }
    o << ']';
}
template <class T> void wr(std::ostream& o, const std::vector<T>& v) {
    o << '[';
    for (size_t k = 0; k < v.size(); ++k) { if (k) o << ','; wr(o, (T)v[k]); }
    o << ']';
}

template <class T> using Plain = typename std::decay<T>::type;
inline std::string next_line() {
    std::string line;
    if (!std::getline(std::cin, line)) bad_input("fewer argument lines than the function has parameters");
    return line;
}
template <class T> T arg() {
    In in(next_line()); T v{};
    try { rd(in, v); } catch (const std::exception& e) { bad_input(std::string(e.what()) + " in " + in.s.substr(0, 200)); }
    in.ws();
    if (in.i != in.s.size()) bad_input("text after the value: " + in.s.substr(0, 200));
    return v;
}
template <class... A> std::tuple<Plain<A>...> args() { return std::tuple<Plain<A>...>{arg<Plain<A>>()...}; }
template <class R> void show(const R& r) { wr(std::cout, r); std::cout << '\n'; }
template <class Tup> void show_first(Tup& t) {
    if constexpr (std::tuple_size<Tup>::value > 0) show(std::get<0>(t)); else std::cout << "null\n";
}
template <class R, class... A> void call(R (*f)(A...)) {
    auto a = args<A...>();
    if constexpr (std::is_void<R>::value) { std::apply([&](auto&... x) { f(x...); }, a); show_first(a); }
    else show(std::apply([&](auto&... x) -> R { return f(x...); }, a));
}
// the object lives on the heap: solutions keep large member arrays
template <class C, class R, class M, class... A> void call_member(M f) {
    auto a = args<A...>(); auto obj = std::make_unique<C>();
    if constexpr (std::is_void<R>::value) { std::apply([&](auto&... x) { ((*obj).*f)(x...); }, a); show_first(a); }
    else show(std::apply([&](auto&... x) -> R { return ((*obj).*f)(x...); }, a));
}
template <class C, class R, class... A> void call(R (C::*f)(A...)) { call_member<C, R, R (C::*)(A...), A...>(f); }
template <class C, class R, class... A> void call(R (C::*f)(A...) const) {
    call_member<C, R, R (C::*)(A...) const, A...>(f);
}
}  // namespace efj
