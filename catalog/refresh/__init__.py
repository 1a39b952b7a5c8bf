"""``python -m catalog refresh`` (the clouds' public price sources) and ``python -m catalog import-facts`` (the
researched tables in ``../shared/facts/prices``): rebuild the catalog's regional CSVs, print what changed."""
