"""The on-call vocabulary: the analyzer every search of fabtui shares and the glossary it reads.

`analysis` turns text (a case, a runbook's symptoms, a query) into index terms: words stemmed,
identifiers kept whole, Chinese as character pairs with Traditional folded to Simplified (`fold`),
and a concept term wherever the reviewed glossary (`glossary.toml`, `glossary`) knows a spelling,
so English and Chinese meet. `units` is what a typed query asks for, position by position, with
a glossary phrase as one unit. No search engine and nothing of fabtui above `errors` is imported:
case search and `runbook find` both build on this package.
"""
