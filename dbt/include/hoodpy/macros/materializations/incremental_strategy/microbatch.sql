{#-- microbatch: replace the batch's event-time window [start, end): delete the table's rows in it, then
     write the batch (an upsert when the model has a unique_key, else an insert). --#}
{% macro hoodpy__get_incremental_microbatch_sql(arg_dict) %}
  {{ return(hoodpy_write_batch(arg_dict, 'microbatch')) }}
{% endmacro %}
