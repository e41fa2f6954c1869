{#-- upsert: update by record key (unique_key), insert the rest; the default for hoodpy tables. With an
     ordering field (precombine_key) a stored row with a larger value survives a late update. --#}
{% macro get_incremental_upsert_sql(arg_dict) %}
  {{ return(adapter.dispatch('get_incremental_upsert_sql', 'dbt')(arg_dict)) }}
{% endmacro %}

{% macro hoodpy__get_incremental_upsert_sql(arg_dict) %}
  {{ return(hoodpy_write_batch(arg_dict, 'upsert')) }}
{% endmacro %}
