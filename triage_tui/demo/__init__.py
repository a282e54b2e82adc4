"""The built-in incident: a launcher whose renamed workers load shared weights, then hang on a barrier.

Only the standard library is imported here: the workers run this package with a replaced argv[0].
"""
