__title__ = "spacy-lpcfg"
__version__ = "0.1.0"
