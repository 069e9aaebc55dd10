// sta-pool: the std containers on sta::allocator. They are the std containers —
// same interface, same complexity — with the pool underneath. Single objects in the pool
// are sta/unique_ptr.hpp's and sta/pooled.hpp's.
#pragma once

#include "sta/allocator.hpp"

#include <deque>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sta {

template <class T>
using vector = std::vector<T, allocator<T>>;
template <class T>
using list = std::list<T, allocator<T>>;
template <class T>
using deque = std::deque<T, allocator<T>>;

template <class CharT, class Traits = std::char_traits<CharT>>
using basic_string = std::basic_string<CharT, Traits, allocator<CharT>>;
using string = basic_string<char>;
using wstring = basic_string<wchar_t>;
using u8string = basic_string<char8_t>;
using u16string = basic_string<char16_t>;
using u32string = basic_string<char32_t>;

template <class K, class V, class Compare = std::less<K>>
using map = std::map<K, V, Compare, allocator<std::pair<const K, V>>>;
template <class K, class V, class Compare = std::less<K>>
using multimap = std::multimap<K, V, Compare, allocator<std::pair<const K, V>>>;
template <class K, class Compare = std::less<K>>
using set = std::set<K, Compare, allocator<K>>;
template <class K, class Compare = std::less<K>>
using multiset = std::multiset<K, Compare, allocator<K>>;

template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
using unordered_map = std::unordered_map<K, V, Hash, Eq, allocator<std::pair<const K, V>>>;
template <class K, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
using unordered_set = std::unordered_set<K, Hash, Eq, allocator<K>>;

} // namespace sta
