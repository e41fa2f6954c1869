{#-- delete+insert: delete the table's rows whose key is in the batch (and match incremental_predicates),
     then insert the batch. --#}
{% macro hoodpy__get_incremental_delete_insert_sql(arg_dict) %}
  {{ return(hoodpy_write_batch(arg_dict, 'delete+insert')) }}
{% endmacro %}
