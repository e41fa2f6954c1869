{#-- The one write every hoodpy strategy makes: the batch (temporary view) into the table, through the
     adapter (one commit; two for delete+insert and microbatch windows). --#}
{% macro hoodpy_write_batch(arg_dict, strategy, update_columns=none) %}
  {%- set columns = arg_dict['dest_columns'] | map(attribute='name') | list -%}
  {%- set message = adapter.hoodpy_write(arg_dict['target_relation'], arg_dict['temp_relation'], strategy,
                                         model, columns, update_columns, arg_dict['incremental_predicates']) -%}
  {{ return({'message': message}) }}
{% endmacro %}
